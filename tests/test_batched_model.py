"""Several replies decoded together by llama.cpp's batch API (agents/models/batched.py), with the real local model
(marked `model`: runs in CI). What must hold whatever the model writes."""

from __future__ import annotations

import os

import pytest

from agents.models import download
from agents.models.batched import SeqSampling
from agents.models.llama_cpp import batched_decoder, chat, chat_many, load_model, prompt_tokens

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
