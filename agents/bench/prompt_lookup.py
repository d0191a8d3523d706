"""Benchmark: llama.cpp prompt-lookup decoding on a repair turn, against plain decoding, same prompt and model.

    python -m agents.bench.prompt_lookup [--repeats 3] [--out results.json]

A repair turn mostly rewrites the script it was shown, so drafting tokens from the prompt could make it faster.
Each configuration loads its own Llama (prompt lookup needs logits for every token), then answers the same
repair-turn conversation greedily with a cold cache; the texts must be identical for the result to count.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from agents.prompts import render, system_message

SCRIPT = '''import csv

totals = {}
with open("sales.csv") as f:
    for row in csv.DictReader(f):
        region = row["region"]
        revenue = int(row["units"]) * float(row["unit_price"])
        totals[region] = totals.get(region, 0) + revenue

for region, revenue in sorted(totals.items(), key=lambda kv: kv[1]):
    print(f"{region}: {revenue:.2f}")

with open("region_revenue.csv", "w") as f:
    f.write("region,revenue\\n")
    for region, revenue in totals.items():
        f.write(f"{region},{revenue}\\n")
'''
TASK = ("The file sales.csv has the columns date, region, product, units, unit_price. Print the total revenue per "
        "region as `Region: revenue` (2 decimals), from the highest revenue to the lowest, and write the same table "
        "to region_revenue.csv with the header `region,revenue`.")


def repair_messages() -> list[dict[str, str]]:
    """A realistic repair turn: the task, the script, and the checks' report that the order is wrong."""
    feedback = render("checks_failed", checks="- FAILED stdout_regex: '(?s)South.*East.*West.*North'\n"
                      "  expected the output to match /(?s)South.*East.*West.*North/; the closest output line is "
                      "'North: 786.34'", output="North: 786.34\nWest: 956.85\nEast: 1065.31\nSouth: 1127.30")
    return [{"role": "system", "content": system_message()}, {"role": "user", "content": TASK},
            {"role": "assistant", "content": f"```python\n{SCRIPT}```"}, {"role": "user", "content": feedback}]


def run_config(path: Path, lookup: int, repeats: int, max_tokens: int) -> dict[str, Any]:
    """Load a Llama (with prompt lookup drafting `lookup` tokens, or none) and time greedy repair turns."""
    import llama_cpp
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    draft = LlamaPromptLookupDecoding(num_pred_tokens=lookup) if lookup else None
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=8192, n_threads=None, n_batch=512, verbose=False,
                          draft_model=draft, chat_format="chat_template.default")
    runs = []
    text = None
    for _ in range(repeats):
        llm.reset()
        started = time.perf_counter()
        out = llm.create_chat_completion(messages=repair_messages(), max_tokens=max_tokens, temperature=0.0,
                                         top_p=1.0, seed=0)
        seconds = time.perf_counter() - started
        text = out["choices"][0]["message"]["content"]
        tokens = out["usage"]["completion_tokens"]
        runs.append({"seconds": round(seconds, 3), "completion_tokens": tokens,
                     "prompt_tokens": out["usage"]["prompt_tokens"], "tok_s": round(tokens / seconds, 2)})
    del llm
    return {"lookup_tokens": lookup, "runs": runs, "median_s": statistics.median(r["seconds"] for r in runs),
            "median_tok_s": statistics.median(r["tok_s"] for r in runs), "text": text}


def main(argv: list[str] | None = None) -> int:
    """Plain vs prompt lookup (10 and 4 drafted tokens); print a table; 0 when the greedy texts match."""
    from rich.console import Console
    from rich.table import Table

    from agents.models.download import default_model_file

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    console = Console()
    results = []
    for lookup in (0, 10, 4):
        with console.status(f"repair turn, prompt lookup {lookup or 'off'} ({args.repeats} runs)…"):
            results.append(run_config(default_model_file(), lookup, args.repeats, args.max_tokens))
    base = results[0]
    table = Table(title="repair turn: plain decoding vs prompt lookup (greedy, cold cache)")
    for col in ("prompt lookup", "completion tokens", "median s", "median tok/s", "speed-up", "same text"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(str(r["lookup_tokens"] or "off"), str(r["runs"][0]["completion_tokens"]), f"{r['median_s']:.2f}",
                      f"{r['median_tok_s']:.2f}", f"{base['median_s'] / r['median_s']:.2f}×",
                      "yes" if r["text"] == base["text"] else "NO")
    console.print(table)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0 if all(r["text"] == base["text"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
