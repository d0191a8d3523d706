"""HumanEval summary: pass@1 per mode, the paired difference with a bootstrap interval, ESR, ARI, costs."""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from typing import Any

from rich.table import Table

from agents.bench.common import percentile
from agents.record.metrics import batch_metrics

MODES = ("single", "loop")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for k successes out of n."""
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def paired_bootstrap(diffs: list[int], resamples: int = 10000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the mean of per-problem differences (loop - single)."""
    if not diffs:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    return (means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1])


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b fixed vs c broken discordant pairs."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def mode_stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures for one mode's rows."""
    n = len(rows)
    solved = [r for r in rows if r["passed"]]
    tokens = sum((r.get("tokens_in") or 0) + (r.get("tokens_out") or 0) for r in rows)
    seconds = [r["seconds"] for r in rows]
    lo, hi = wilson(len(solved), n)
    return {
        "n": n, "passed": len(solved), "pass_at_1": round(len(solved) / n, 4) if n else None,
        "pass_at_1_ci95": [round(lo, 4), round(hi, 4)],
        "esr": round(sum(1 for r in rows if r["runs_ok"]) / n, 4) if n else None,
        "visible_pass_rate": round(sum(1 for r in rows if r["visible_ok"]) / n, 4) if n else None,
        "ari": round(statistics.mean(r["repair_iterations"] for r in solved), 3) if solved else None,
        "mean_turns": round(statistics.mean(r["turns"] for r in rows), 3) if n else None,
        "tokens_total": tokens,
        "tokens_per_solved": round(tokens / len(solved), 1) if solved else None,
        "seconds_median": round(statistics.median(seconds), 2) if seconds else None,
        "seconds_p90": round(percentile(seconds, 90) or 0, 2) if seconds else None,
        "seconds_total": round(sum(seconds), 1),
        "final_exec": dict(Counter(r["exec"] for r in rows)),
        "hidden_outcome": dict(Counter(r["hidden"] for r in rows)),
        "ended_by": dict(Counter(r.get("ended_by") or "?" for r in rows)),
        "runs_with_repeated_code": sum(1 for r in rows if r.get("repeated_turns")),
        "max_prompt_tokens_median": statistics.median(r.get("max_prompt_tokens") or 0 for r in rows) if n else None,
        # the team paper's metrics over the loop's runs (agents/record/metrics.py); success there is the run's own: the
        # docstring examples passed, not the hidden tests
        "metrics": batch_metrics([r["metrics"] for r in rows if r.get("metrics")]),
    }


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary.json body from every JSONL record (one per problem and mode)."""
    by_mode: dict[str, dict[str, dict[str, Any]]] = {m: {} for m in MODES}
    for r in records:
        by_mode.setdefault(r["mode"], {})[r["task_id"]] = r
    out: dict[str, Any] = {m: mode_stats(list(rows.values())) for m, rows in by_mode.items() if rows}
    both = sorted(set(by_mode["single"]) & set(by_mode["loop"]))
    if both:
        single = [by_mode["single"][t]["passed"] for t in both]
        loop = [by_mode["loop"][t]["passed"] for t in both]
        diffs = [int(b) - int(a) for a, b in zip(single, loop)]
        fixed = [t for t, d in zip(both, diffs) if d > 0]
        broken = [t for t, d in zip(both, diffs) if d < 0]
        lo, hi = paired_bootstrap(diffs)
        first = [by_mode["loop"][t] for t in both]
        out["paired"] = {
            "n": len(both),
            "single_pass_at_1": round(sum(single) / len(both), 4),
            "loop_pass_at_1": round(sum(loop) / len(both), 4),
            "difference": round(sum(diffs) / len(both), 4),
            "difference_ci95_bootstrap": [round(lo, 4), round(hi, 4)],
            "mcnemar_p": round(mcnemar_exact(len(fixed), len(broken)), 4),
            "fixed_by_loop": fixed, "broken_by_loop": broken,
            "loop_first_turn_same_as_single": sum(1 for t in both if by_mode["loop"][t].get("first_reply_sha")
                                                  == by_mode["single"][t].get("first_reply_sha")),
            "loop_first_turn_passed": sum(1 for r in first if r.get("first_passed")),
            "loop_repairs_broke_first_turn": sum(1 for r in first if r.get("first_passed") and not r["passed"]),
            "loop_repairs_fixed_first_turn": sum(1 for r in first if not r.get("first_passed") and r["passed"]),
            "single_from_loop_first_reply": all(by_mode["single"][t].get("shared_first_turn") for t in both),
        }
        greedy = [r.get("greedy_passed", r["passed"]) for r in first]
        singles = [by_mode["single"][t]["passed"] for t in both]
        # the first conversation alone (greedy first reply, sampled repairs, repeats re-asked; no fresh attempt)
        out["paired"]["first_attempt_pass_at_1"] = round(sum(greedy) / len(both), 4)
        out["paired"]["first_attempt_minus_single"] = round((sum(greedy) - sum(singles)) / len(both), 4)
        out["paired"]["first_attempt_fixed"] = sum(1 for g, s1 in zip(greedy, singles) if g and not s1)
        out["paired"]["first_attempt_broke"] = sum(1 for g, s1 in zip(greedy, singles) if s1 and not g)
        out["paired"]["fresh_attempts_fixed"] = sum(1 for r, g in zip(first, greedy) if r["passed"] and not g)
        out["paired"]["fresh_attempts_broke"] = sum(1 for r, g in zip(first, greedy) if g and not r["passed"])
        out["paired"]["rejected_repeats"] = sum(r.get("rejected_repeats") or 0 for r in first)
        out["paired"]["blocked_repeats"] = sum(r.get("blocked_repeats") or 0 for r in first)
        out["paired"]["rejected_no_code"] = sum(r.get("rejected_no_code") or 0 for r in first)
    return out


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def summary_table(summary: dict[str, Any]) -> Table:
    """The rich table printed at the end."""
    modes = [m for m in MODES if m in summary]
    table = Table(title="HumanEval pass@1: single pass vs self-debug loop")
    table.add_column("metric")
    team = bool((summary.get("meta") or {}).get("team"))
    for m in modes:
        table.add_column(f"{m} (team)" if team and m == "loop" else m, justify="right")

    def row(label: str, fn: Any) -> None:
        table.add_row(label, *[fn(summary[m]) for m in modes])

    row("problems", lambda s: str(s["n"]))
    row("pass@1 (hidden tests)", lambda s: f"{_pct(s['pass_at_1'])} ({s['passed']})")
    row("95% CI (Wilson)", lambda s: f"{_pct(s['pass_at_1_ci95'][0])}–{_pct(s['pass_at_1_ci95'][1])}")
    row("ESR (final code runs)", lambda s: _pct(s["esr"]))
    row("visible examples all pass", lambda s: _pct(s["visible_pass_rate"]))
    row("ARI (repairs per solved)", lambda s: "-" if s["ari"] is None else f"{s['ari']:.2f}")
    row("mean assistant turns", lambda s: f"{s['mean_turns']:.2f}")
    row("tokens per solved", lambda s: "-" if s["tokens_per_solved"] is None else f"{s['tokens_per_solved']:.0f}")
    row("seconds/problem median", lambda s: f"{s['seconds_median']:.1f}")
    row("seconds/problem p90", lambda s: f"{s['seconds_p90']:.1f}")
    row("error reduction ratio", lambda s: _ratio((s.get("metrics") or {}).get("error_reduction_ratio")))
    row("execution stability rate", lambda s: _ratio((s.get("metrics") or {}).get("execution_stability_rate")))
    p = summary.get("paired")
    if p:
        table.add_section()
        extra = [""] * (len(modes) - 1)
        table.add_row("loop − single (paired)", f"{100 * p['difference']:+.1f} pts", *extra)
        lo, hi = p["difference_ci95_bootstrap"]
        table.add_row("95% CI (paired bootstrap)", f"{100 * lo:+.1f} … {100 * hi:+.1f}", *extra)
        table.add_row("fixed / broken by loop", f"{len(p['fixed_by_loop'])} / {len(p['broken_by_loop'])}", *extra)
        table.add_row("McNemar exact p", f"{p['mcnemar_p']:.3f}", *extra)
        if "first_attempt_pass_at_1" in p:
            table.add_row("first attempt alone (no fresh attempts)", _pct(p["first_attempt_pass_at_1"]), *extra)
            table.add_row("first attempt − single", f"{100 * p['first_attempt_minus_single']:+.1f} pts", *extra)
            table.add_row("repeats rejected / answered unrun", f"{p['rejected_repeats']} / {p['blocked_repeats']}",
                          *extra)
    return table
