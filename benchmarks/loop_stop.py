"""What stopping a long-period loop saves: one looping prompt, one generation per seed, before and after.

    python -m benchmarks.loop_stop [--seeds 1,2,3] [--model local] [--out loop_stop.jsonl]

Each seed is generated once with the short-piece detector only (the line-loop detector switched off): that is
"before". The same stream of pieces is then replayed through agents/models/loops.py `find_loop` at the same piece
boundaries: where it would have stopped (tokens, seconds since the request) is "after"; the same seed gives the
same tokens up to there. The salvaged reply is shown, and whether its Python parses.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

TASK = "Write a class Stack with push, pop, peek and is_empty, and test it with asserts."


def measure(seed: int, model: Any, messages: list[dict[str, str]]) -> dict[str, Any]:
    """One generation at temperature 0.7 with the line-loop detector off; where it would have stopped."""
    import agents.models.llama_cpp as lc
    from agents.models.loops import find_loop, stopped_reply

    stamps: list[float] = []
    pieces: list[str] = []
    started = time.perf_counter()

    def sink(piece: str) -> None:
        if piece:  # an empty piece is a beat of the prompt's evaluation, not a token
            stamps.append(time.perf_counter() - started)
            pieces.append(piece)

    detector, lc.find_loop = lc.find_loop, lambda text: None
    try:
        _, usage = lc.chat(model, messages, max_tokens=1024, temperature=0.7, top_p=0.95, seed=seed, on_token=sink)
    finally:
        lc.find_loop = detector
    row: dict[str, Any] = {"seed": seed, "before_tokens": usage.completion_tokens,
                           "before_s": round(time.perf_counter() - started, 1),
                           "finish_reason": (usage.extra or {}).get("finish_reason"), "fired": False}
    for i, piece in enumerate(pieces):
        loop = find_loop("".join(pieces[:i + 1])) if "\n" in piece else None
        if loop is not None:
            _, note = stopped_reply("".join(pieces[:i + 1]), loop)
            row.update(fired=True, after_tokens=i + 1, after_s=round(stamps[i], 1), **note["loop"])
            break
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3", help="comma-separated seeds")
    parser.add_argument("--model", default="local", help="a llama_cpp entry of configs/llm.yaml")
    parser.add_argument("--out", type=Path, default=None, help="append one JSON line per seed here")
    args = parser.parse_args(argv)
    from agents.feedback.prompts import system_message
    from agents.models.config import build_provider

    provider = build_provider(args.model)
    provider.check_ready()
    messages = [{"role": "system", "content": system_message()}, {"role": "user", "content": TASK}]
    for seed in (int(s) for s in args.seeds.split(",")):
        row = measure(seed, provider.model(), messages)
        line = json.dumps(row)
        print(line, flush=True)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
