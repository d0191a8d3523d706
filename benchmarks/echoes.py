"""How often the model's first reply to a task about given files sends them back unchanged (an echo).

    python -m benchmarks.echoes --only fix_median,logsum_level_option [--samples 3] [--out echoes.json]

For each scenario: the first message an attempt sends (the task and its file preview, the product's system prompt),
answered once as the loop's first reply is (the model's own setting: greedy for the embedded model) and `--samples`
times at the strategy's attempt_temperature (decoded together, as candidates are); each reply is classified
with the loop's own rule (agents/loop/repeats.py `RepeatMemory.echoes`, against a workspace holding the starting files):
an echo saves files, each already holding exactly that content. Nothing runs in a sandbox; it measures what the
turn policy's echo rule (docs/STRATEGY.md) acts on.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.scenarios_eval import select_scenarios


def first_messages(scenario: Any) -> list[dict[str, str]]:
    """The system prompt and the first user message of attempt 1, as the loop builds them."""
    from agents.feedback.prompts import system_message
    from agents.loop.briefing import briefed_task

    system = scenario.assistant.system_text or system_message(scenario.about_files())
    task = briefed_task(scenario.task, scenario.text_files(), scenario.strategy.file_preview)
    return [{"role": "system", "content": system}, {"role": "user", "content": task}]


def classify(scenario: Any, replies: list[str]) -> list[dict[str, Any]]:
    """For each reply: the files it echoes (all it saves, unchanged) or [], and whether it saves any file."""
    from agents.loop.codeblocks import extract_code_blocks
    from agents.loop.repeats import RepeatMemory
    from agents.scenario.project_files import write_files

    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        write_files(workspace, scenario.starting_files())
        memory = RepeatMemory()
        memory.begin(workspace)
        return [{"echo": memory.echoes(text), "saves": sum(1 for b in extract_code_blocks(text) if b.filename)}
                for text in replies]


def run(names: list[str], samples: int) -> list[dict[str, Any]]:
    """One row per scenario: greedy and sampled first replies, classified."""
    from agents.models.config import build_provider

    rows, provider = [], None
    for scenario in select_scenarios(only=names):
        provider = provider or build_provider(scenario.model)
        messages = first_messages(scenario)
        started = time.perf_counter()
        quiet, cfg = {"on_token": lambda _text: None}, scenario.strategy
        # as the loop samples a first turn: its own reply with the model's setting, the others at attempt_temperature
        greedy = provider.complete_many(messages, [provider.sampling_params(None, cfg.seed, cfg.top_p)], **quiet)
        hot = [provider.sampling_params(cfg.attempt_temperature, 100 + k, cfg.top_p) for k in range(samples)]
        sampled = provider.complete_many(messages, hot, **quiet) if samples else []
        found = classify(scenario, [text for text, _ in greedy + sampled])
        rows.append({"scenario": scenario.name, "greedy_echo": bool(found[0]["echo"]),
                     "sampled_echoes": sum(1 for f in found[1:] if f["echo"]), "samples": samples,
                     "replies": found, "seconds": round(time.perf_counter() - started, 1)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", required=True, help="comma-separated scenario names")
    parser.add_argument("--samples", type=int, default=3, help="sampled replies per scenario (0.7), besides greedy")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    args = parser.parse_args()
    rows = run([n for n in args.only.split(",") if n], args.samples)
    echoes = sum(int(r["greedy_echo"]) + r["sampled_echoes"] for r in rows)
    total = sum(1 + r["samples"] for r in rows)
    print(f"echoes: {echoes} of {total} first replies; greedy {sum(r['greedy_echo'] for r in rows)} of {len(rows)}")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
