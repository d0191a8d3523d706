"""Several replies decoded together by llama.cpp's batch API (agents/models/batched.py), with the real local model
(marked `model`: runs in CI). What must hold whatever the model writes."""

from __future__ import annotations

import os

import pytest

from agents.loop.budget import BudgetSpent, TimeBudget
from agents.models import download
from agents.models.batched import SeqSampling
from agents.models.llama_cpp import batched_decoder, chat, chat_many, load_model, prompt_tokens
from tests.conftest import ROOT

pytestmark = [pytest.mark.model]

MESSAGES = [{"role": "system", "content": "Answer with one short Python script in a ```python block."},
            {"role": "user", "content": "Print the squares of 1 to 5."}]


@pytest.fixture(scope="module")
def model():
    from agents.models.config import build_provider

    build_provider("local").check_ready()
    return load_model(download.default_model_file(), 8192, os.cpu_count() or 1)


def test_one_greedy_sequence_in_the_batched_loop_writes_what_the_single_path_writes(model):
    model.llm.reset()
    single, _ = chat(model, MESSAGES, max_tokens=96)
    decoder = batched_decoder(model, 1, 96)
    decoder.cached = []
    (only,), reused = decoder.generate(prompt_tokens(model, MESSAGES), [SeqSampling()], 96)
    assert only.text == single and reused == 0


def test_four_candidates_each_stop_on_their_own_are_reproducible_and_reuse_the_prompt(model):
    samplings = [{"temperature": 0.0, "seed": 0}] + [{"temperature": 0.9, "top_p": 0.95, "seed": s} for s in (1, 2, 3)]
    first = chat_many(model, MESSAGES, samplings, max_tokens=160)
    again = chat_many(model, MESSAGES, samplings, max_tokens=160)
    assert [t for t, _ in first] == [t for t, _ in again]  # the same seeds give the same replies
    texts = [t for t, _ in first]
    assert len(set(texts)) >= 2, texts  # the sampled ones are not all the greedy one
    n_prompt = len(prompt_tokens(model, MESSAGES))
    model.llm.reset()
    assert texts[0] == chat(model, MESSAGES, max_tokens=160)[0]  # the greedy first one is today's greedy reply
    for i, (_, usage) in enumerate(again):
        assert usage.extra["candidate"] == i + 1 and usage.extra["candidates"] == 4
        assert usage.extra["batched"] is (i > 0)  # the greedy one alone, the sampled ones together
        assert usage.extra["finish_reason"] in ("stop", "length", "repetition")
        assert 0 < usage.completion_tokens <= 160 and usage.prompt_tokens == n_prompt
        if i > 0:
            assert usage.cached_tokens == n_prompt - 1  # the second call evaluated only the last prompt token
    short = chat_many(model, MESSAGES, samplings[:2], max_tokens=8)  # one greedy alone, one sampled (N=1 path)
    assert all(u.completion_tokens == 8 for _, u in short)


LONG = [MESSAGES[0], {"role": "user", "content": "Summarise this module:\n```python\n"
                      + (ROOT / "agents" / "feedback" / "feedback.py").read_text(encoding="utf-8")[:4500] + "\n```"}]
"""About 1,150 prompt tokens: three batches of 512 (the beats), a quarter of a minute of prompt evaluation on 2 cores,
the phase that ran past a budget."""


def test_the_time_budget_stops_a_long_prompt_while_it_is_evaluated(model):
    """The prompt is evaluated in batches of n_batch tokens with a beat before each, a chance for the budget's guard:
    a budget spent at once stops the single path and the batched one before their first batch."""
    total = len(prompt_tokens(model, LONG))
    for generate in (lambda sink: chat(model, LONG, max_tokens=32, on_token=sink),
                     lambda sink: chat_many(model, LONG, [{"temperature": 0.9, "seed": s} for s in (1, 2)],
                                            max_tokens=32, on_token=sink)):
        model.llm.reset()
        if model.batched is not None:
            model.batched.cached = []
        budget = TimeBudget(0.001)
        with pytest.raises(BudgetSpent):
            generate(budget.guard(lambda _text: None, lambda: "while generating"))
        evaluated = max(model.llm.n_tokens, len(model.batched.cached) if model.batched is not None else 0)
        assert evaluated == 0 < total, (evaluated, total)


BEAT = 128
"""The batch size of the beats test: both paths evaluate the prompt in batches of the Llama's n_batch (512 in the
product), so a quarter of it shows the same batching on a quarter of the prompt (with a 24-token reply: 42 s -> 13 s
on 2 AVX2 cores)."""


def test_a_prompt_evaluated_in_beats_gives_the_same_greedy_reply(model, monkeypatch):
    monkeypatch.setattr(model.llm, "n_batch", BEAT)
    prompt = [LONG[0], {"role": "user", "content": LONG[1]["content"][:1400] + "\n```"}]
    assert len(prompt_tokens(model, prompt)) > 2 * BEAT  # three beats at least
    model.llm.reset()
    plain, _ = chat(model, prompt, max_tokens=24)  # llama-cpp-python evaluates the whole prompt (no sink: no beats)
    model.llm.reset()
    beaten, _ = chat(model, prompt, max_tokens=24, on_token=TimeBudget(3600).guard(None, lambda: ""))
    assert beaten == plain
