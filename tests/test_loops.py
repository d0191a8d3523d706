"""Loops with a long period (issue 19 part 9): a repeated block of lines is found at a line boundary, generation
stops there, and the reply is cut back to one copy with its fence closed when that parses."""

from __future__ import annotations

import ast
import importlib.util
import json
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import pytest

from agents.models.loops import find_loop, salvage, salvaged_loop, stopped_reply

STACK = '''```python
class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self):
        if self.is_empty():
            raise IndexError("pop from empty stack")
        return self.items.pop()

    def peek(self):
        if self.is_empty():
            raise IndexError("peek from empty stack")
        return self.items[-1]

    def is_empty(self):
        return len(self.items) == 0


'''
ASSERTS = '''# Test the Stack class
stack = Stack()
assert stack.is_empty() == True
stack.push(1)
stack.push(2)
stack.push(3)
assert stack.peek() == 3
assert stack.pop() == 3
assert stack.peek() == 2
assert stack.pop() == 2
assert stack.pop() == 1
assert stack.is_empty() == True
'''
LOOPING = STACK + ASSERTS * 5 + "# Test the St"  # as the model left it: cut mid-line at max_tokens


def first_fire(text: str) -> tuple[int, Any]:
    """Feed the text line by line as the stream would; (characters read, loop) at the first line that fires."""
    end = 0
    while (end := text.find("\n", end) + 1) > 0:
        if (loop := find_loop(text[:end])) is not None:
            return end, loop
    return len(text), None


def test_a_12_line_assert_block_repeated_fires_as_soon_as_its_second_copy_ends():
    read, loop = first_fire(LOOPING)
    assert loop is not None and loop.period == 12 and loop.copies == 2
    assert read == len(STACK) + 2 * len(ASSERTS)  # not one line later: ~30 tokens of loop, not ~800
    assert loop.keep == len(STACK) + len(ASSERTS)
    whole = find_loop(LOOPING)
    assert (whole.period, whole.copies, whole.keep) == (12, 5, loop.keep)


def test_short_period_loops_fire_after_three_copies_and_200_repeated_characters():
    one = "```python\nfor i in range(3):\n" + "    print('still here, still counting')\n" * 12
    _, loop = first_fire(one)
    assert loop is not None and loop.period == 1 and loop.copies >= 3
    two = "```python\nx = 0\n" + "x += 1\nprint('x is now', x, 'and counting')\n" * 12
    _, loop = first_fire(two)
    assert loop is not None and loop.period == 2
    short_block = "```python\n" + "a = 1\nb = 2\nc = a + b\nprint(c)\n" * 20  # 27 characters a copy
    _, loop = first_fire(short_block)
    assert loop is not None and loop.period == 4 and loop.copies == 9  # 8 repeats: 216 characters


LEGIT = [
    # similar asserts with other arguments, twice the same assert, a few equal table rows, blank lines, print()s
    "```python\n" + "".join(f"assert fib({n}) == {v}\n" for n, v in enumerate([0, 1, 1, 2, 3, 5, 8, 13, 21, 34] * 3)),
    "```python\nstack.push(1)\nassert stack.peek() == 1\nstack.push(1)\nassert stack.peek() == 1\n",
    "```python\ngrid = [\n" + "    [0, 0, 0, 0, 0, 0],\n" * 6 + "]\nprint(grid)\n",
    "```python\nimport os\n" + "\n" * 40 + "print(os.getcwd())\n",
    "```python\n" + "print()\n" * 10 + "print('-' * 40)\n" * 3,
    "```python\n" + "".join(f"print('row', {i}, 'of the report, with its totals and the running average')\n"
                            for i in range(40)),
    # a four-line block (168 characters) written twice on purpose: under 200 characters, no third copy
    "```python\n" + "result = solve([3, 1, 2], limit=10, verbose=False)\nprint('result of the run:', result)\n"
    "assert result == [1, 2, 3], 'solve sorts the list'\nprint('the run passed, all good')\n" * 2,
]


@pytest.mark.parametrize("text", LEGIT, ids=["fib-table", "two-same-asserts", "zero-grid", "blank-lines",
                                             "print-lines", "report-rows", "block-twice"])
def test_legit_code_with_similar_or_briefly_repeated_lines_never_fires(text):
    assert first_fire(text)[1] is None


STDLIB = ["argparse", "calendar", "csv", "dataclasses", "difflib", "fractions", "heapq", "json.decoder",
          "json.encoder", "statistics", "string", "textwrap"]


def test_long_legit_scripts_never_fire_at_any_line():
    for name in STDLIB:  # plain Python, stable across versions: ~12,000 lines, each one checked
        path = Path(importlib.util.find_spec(name).origin)
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for start in range(0, len(lines), 120):  # replies are at most ~150 lines
            reply = "```python\n" + "".join(lines[start:start + 150])
            assert first_fire(reply)[1] is None, f"{path}:{start}"


def test_salvage_keeps_one_copy_closes_the_fence_and_the_code_runs():
    text, note = stopped_reply(LOOPING, find_loop(LOOPING))
    assert text == STACK + ASSERTS + "```"
    assert note == {"loop": {"period_lines": 12, "copies": 5, "cut_chars": len(LOOPING) - len(STACK + ASSERTS),
                             "content_chars": len(LOOPING), "salvaged": True}}
    code = text.removeprefix("```python\n").removesuffix("```")
    ast.parse(code)
    exec(compile(code, "<salvaged>", "exec"), {})  # our own text: the asserts hold
    note = "This script defines the Stack class and checks each of its methods with asserts.\n"
    closed = STACK + ASSERTS + "```\n" + note * 4  # a loop in the prose after a closed block
    assert salvage(closed, find_loop(closed)) == STACK + ASSERTS + "```\n" + note


def test_a_salvage_that_does_not_parse_leaves_the_reply_cut():
    table = "```python\ngrid = [\n" + "    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],\n" * 12
    loop = find_loop(table)
    assert loop is not None and salvage(table, loop) is None  # one row kept: the list is never closed
    assert stopped_reply(table, loop) == (table, {"loop": {"period_lines": 1, "copies": 12,
                                                           "cut_chars": len(table) - loop.keep,
                                                           "content_chars": len(table), "salvaged": False}})
    prose = "I will write it.\n" + "The stack holds the items in a list, last one on top.\n" * 6
    assert salvage(prose, find_loop(prose)) is None  # no Python at all
    assert stopped_reply("```python\nprint(1)\n```", None) == ("```python\nprint(1)\n```", {})


def test_the_short_piece_detector_still_works():
    from agents.models.loops import looping

    assert looping("x = re.match(r'" + "\\d{3} " * 60)
    assert not looping("print('=' * 40)\nrow = [0, 0, 0, 0, 0, 0]\n" + "for i in range(3):\n    print(i)\n" * 3)


# -- the streaming loop of the local client, with a stand-in for llama_cpp.Llama ----------------------------------

class FakeLlama:
    """Streams a fixed text in 4-character pieces, as create_chat_completion(stream=True) does; counts them."""

    def __init__(self, text: str):
        self.text = text
        self.streamed = 0
        self.n_tokens = 0
        self._input_ids = SimpleNamespace(tolist=lambda: [])

    def n_ctx(self) -> int:
        return 8192

    def tokenize(self, data: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return list(range(len(data) // 4 + 1))

    def longest_token_prefix(self, a: list[int], b: list[int]) -> int:
        return 0

    def create_chat_completion(self, messages: list[dict[str, str]], max_tokens: int, **kw: Any) -> Iterator[dict]:
        prompt = len(self.tokenize("".join(m["content"] for m in messages).encode()))
        pieces = [self.text[i:i + 4] for i in range(0, len(self.text), 4)][:max_tokens]
        for i, piece in enumerate(pieces, 1):
            self.streamed, self.n_tokens = i, prompt + i - 1  # the piece yielded is not evaluated yet
            last = i == len(pieces)
            yield {"choices": [{"delta": {"content": piece},
                                "finish_reason": ("length" if i == max_tokens else "stop") if last else None}]}


def fake_model(text: str) -> Any:
    from agents.models.llama_cpp import LoadedModel

    def formatter(messages):
        return SimpleNamespace(prompt="".join(m["content"] for m in messages), added_special=True)

    return LoadedModel(FakeLlama(text), formatter, threading.Lock(), 0.0)


@pytest.fixture
def no_perf(monkeypatch: pytest.MonkeyPatch) -> None:
    """llama.cpp's perf counters need a real context."""
    monkeypatch.setattr("agents.models.llama_cpp._perf", lambda llm, reset=False: None)


def test_the_local_client_stops_at_the_second_copy_and_returns_the_salvaged_reply(no_perf):
    from agents.models.llama_cpp import chat

    model = fake_model(STACK + ASSERTS * 40)
    text, usage = chat(model, [{"role": "user", "content": "Write a class Stack"}], max_tokens=1024)
    assert text == STACK + ASSERTS + "```"
    assert model.llm.streamed * 4 <= len(STACK) + 2 * len(ASSERTS) + 4 < len(model.llm.text) // 4
    assert usage.extra["finish_reason"] == "repetition" and usage.extra["loop"]["salvaged"] is True
    assert usage.extra["loop"]["period_lines"] == 12 and usage.completion_tokens == model.llm.streamed
    plain = fake_model(STACK + ASSERTS + "```")
    assert chat(plain, [{"role": "user", "content": "x"}], max_tokens=1024)[0] == STACK + ASSERTS + "```"


def test_the_strategy_records_a_salvaged_reply_and_keeps_it(no_perf, tmp_path: Path):
    from autogen import AssistantAgent, UserProxyAgent

    from agents.loop.attempt import install_turns
    from agents.loop.repeats import RepeatMemory
    from agents.loop.turn_policy import TurnPolicy
    from agents.models.config import build_provider
    from agents.record.display import NullDisplay
    from agents.record.transcript import JsonlRecorder
    from agents.scenario.strategy_config import StrategyConfig

    provider = build_provider({"provider": "llama_cpp", "auto_pull": False}, origin="test")
    model = fake_model(LOOPING)
    provider.model = lambda: model
    assistant = AssistantAgent("assistant", llm_config=provider.llm_config(), system_message="Write Python.")
    provider.attach(assistant)
    install_turns(assistant, TurnPolicy(StrategyConfig(), 1, "NEVER", RepeatMemory(), lambda m: False), provider,
                  JsonlRecorder(tmp_path, {}), NullDisplay())
    user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
    reply = assistant.generate_reply(messages=[{"role": "user", "content": "Write a class Stack"}], sender=user)
    assert (reply.get("content") if isinstance(reply, dict) else reply) == STACK + ASSERTS + "```"
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    (salvaged,) = [e for e in events if e["type"] == "reply_salvaged"]
    assert {k: v for k, v in salvaged.items() if not k.endswith("_chars")} == {
        "type": "reply_salvaged", "attempt": 1, "turn": 1, "resample": 0, "period_lines": 12, "copies": 2,
        "salvaged": True}
    assert salvaged["content_chars"] - salvaged["cut_chars"] == len(STACK + ASSERTS)
    assert not [e for e in events if e["type"] == "reply_rejected"]  # kept: no re-ask
    assert salvaged_loop(provider) is not None and provider.pop_usage().extra["loop"]["salvaged"]
