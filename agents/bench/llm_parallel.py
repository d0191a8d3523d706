"""Benchmark: several replies decoded together (agents/models/batched.py) against one, on the same prompt.

    codeduet bench llm --parallel 1,2,4,8

For each N: the prompt evaluated once (cold), then N sequences decoded together, the first greedy and the others
sampled (temperature 0.7, their own seeds), as the loop's candidates are. Two passes per N: `fixed`, every sequence
decodes exactly max_tokens (the same work per sequence at every N, which is what the aggregate rate compares), and
`natural`, each stops at its end of turn (what a turn costs). Also: N=1 through the batched path gives the same
greedy text as the single-reply path (`chat`), and the first of N candidates too.
"""

from __future__ import annotations

import os
import resource
import statistics
import time
from typing import Any

from agents.bench.llm_throughput import SYSTEM, TASK


def _pass(decoder: Any, tokens: list[int], n: int, max_tokens: int, fixed: bool) -> dict[str, Any]:
    """One cold decode of n sequences; rates and times."""
    from agents.models.batched import SeqSampling, loop_check

    decoder.cached = []  # cold: the prompt is evaluated every time
    samplings = [SeqSampling()] + [SeqSampling(0.7, 0.95, k) for k in range(1, n)]
    started = time.perf_counter()
    results, _ = decoder.generate(tokens, samplings, max_tokens, should_stop=None if fixed else loop_check,
                                  stop_at_eog=not fixed)
    wall = time.perf_counter() - started
    ttft = min(r.first_token_s or wall for r in results)
    total = sum(r.tokens for r in results)
    return {"n": n, "tokens": total, "seconds": round(wall, 3), "ttft_s": round(ttft, 3),
            "aggregate_tok_s": round(total / wall, 2), "decode_tok_s": round(total / max(1e-9, wall - ttft), 2),
            "per_seq_tok_s": round(statistics.mean(r.tokens / max(1e-9, r.seconds) for r in results), 2),
            "first_text": results[0].text}


def main(console: Any = None, *, ns: list[int] | None = None, max_tokens: int = 128,
         repeats: int = 2) -> dict[str, Any]:
    """Run the benchmark, print a table, and return the numbers."""
    from rich.console import Console
    from rich.table import Table

    from agents.models import download
    from agents.models.llama_cpp import batched_decoder, chat, load_model, prompt_tokens

    console = console or Console()
    ns = ns or [1, 2, 4, 8]
    path = download.pull_model(console=console)
    threads = os.cpu_count() or 1
    model = load_model(path, 8192, threads)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    tokens = prompt_tokens(model, messages)
    model.llm.reset()
    greedy, _ = chat(model, messages, max_tokens=max_tokens)
    rows: list[dict[str, Any]] = []
    for n in ns:
        decoder = batched_decoder(model, n, max_tokens)
        for mode in ("fixed", "natural"):
            runs = [_pass(decoder, tokens, n, max_tokens, mode == "fixed") for _ in range(repeats)]
            best = {k: statistics.median(r[k] for r in runs) for k in ("seconds", "ttft_s", "aggregate_tok_s",
                                                                       "decode_tok_s", "per_seq_tok_s", "tokens")}
            rows.append({"mode": mode, "n": n, **best, "same_greedy_text": runs[-1]["first_text"] == greedy})
            console.print(f"N={n} {mode}: {best['tokens']:.0f} tokens in {best['seconds']:.2f} s, "
                          f"{best['aggregate_tok_s']:.1f} tok/s aggregate")
    base = {r["mode"]: r["aggregate_tok_s"] for r in rows if r["n"] == 1}
    for r in rows:
        r["speedup"] = round(r["aggregate_tok_s"] / max(1e-9, base.get(r["mode"], r["aggregate_tok_s"])), 2)
    result = {"model_path": str(path), "n_threads": threads, "prompt_tokens": len(tokens), "max_tokens": max_tokens,
              "repeats": repeats, "rows": rows, "loadavg_1m": round(os.getloadavg()[0], 2),
              "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    table = Table(title=f"Batched decoding ({len(tokens)}-token prompt, {max_tokens} max new tokens per sequence, "
                        f"{threads} threads, median of {repeats})")
    for col in ("pass", "N", "tokens", "s", "TTFT s", "agg tok/s", "x N=1", "per-seq tok/s", "greedy text same"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(r["mode"], str(r["n"]), f"{r['tokens']:.0f}", f"{r['seconds']:.2f}", f"{r['ttft_s']:.2f}",
                      f"{r['aggregate_tok_s']:.1f}", f"{r['speedup']:.2f}", f"{r['per_seq_tok_s']:.1f}",
                      str(r["same_greedy_text"]))
    console.print(table)
    console.print(f"peak RSS {result['peak_rss_mb']} MB; load average {result['loadavg_1m']}")
    return result
