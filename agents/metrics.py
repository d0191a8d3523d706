"""The team paper's metrics, for the pair and the team alike: per run from its transcript (`run_facts`, in each
`run --json` line), and over a batch (`batch_metrics`, under the batch table and as the last `--json` line).
docs/STRATEGY.md defines each one and says where codeduet counts differently.

An execution's errors are its failed acceptance checks (with no checks: 1 when its last block exited non-zero);
a run's first execution is the first report of attempt 1, its final one the last report of the attempt it kept."""

from __future__ import annotations

from statistics import mean
from typing import Any

NOT_RUN = {"setup": "?", "success": False, "first_passed": False, "refinements": 0, "initial_errors": None,
           "final_errors": None, "executions": 0, "clean_executions": 0}
"""The facts of a batch row with no transcript (it ended in an error before running): a failed run."""


def errors(outcome: dict[str, Any]) -> int:
    """Failed checks of one report (no checks: whether its last block failed)."""
    checks = outcome.get("checks") or []
    if checks:
        return sum(1 for c in checks if not c.get("passed"))
    runs = outcome.get("executions") or []
    return int(bool(runs) and runs[-1].get("exit_code") != 0 and not runs[-1].get("usage")
               and not runs[-1].get("server"))


def run_facts(t: dict[str, Any]) -> dict[str, Any]:
    """What the metrics need of one run: the setup, success, the first and final executions' errors, the
    refinement iterations and how many executions ran to completion."""
    reports = [m for m in t.get("messages") or [] if (m.get("outcome") or {}).get("kind") == "executed"]
    kept = t.get("chosen_attempt") or max([m.get("attempt") or 1 for m in reports], default=1)
    final = [m for m in reports if (m.get("attempt") or 1) == kept]
    runs = [e for m in reports for e in (m["outcome"].get("executions") or [])]
    team = bool((t.get("scenario") or {}).get("team"))
    first_errors = errors(reports[0]["outcome"]) if reports else None
    return {"setup": "team" if team else "pair", "success": t.get("status") == "success",
            "first_passed": bool(reports) and bool(reports[0]["outcome"].get("success")),
            "refinements": max(len(reports) - 1, 0), "initial_errors": first_errors,
            "final_errors": errors(final[-1]["outcome"]) if final else None,
            "executions": len(runs),
            # a server stopped as servers are ran cleanly too (agents/sandbox/servers.py)
            "clean_executions": sum(1 for e in runs if (e.get("exit_code") == 0 or e.get("server"))
                                    and not e.get("timed_out") and not e.get("oom_killed"))}


def batch_metrics(facts: list[dict[str, Any]]) -> dict[str, Any]:
    """The five metrics (and the single-pass rate) over runs' facts; runs that executed nothing count as failed
    and add no errors."""
    n = len(facts)
    if not n:
        return {"runs": 0}
    fixed = [f["refinements"] for f in facts if f["success"] and not f["first_passed"] and f["refinements"]]
    initial = sum(f["initial_errors"] or 0 for f in facts)
    final = sum(f["final_errors"] or 0 for f in facts)
    executions = sum(f["executions"] for f in facts)
    spread: dict[str, int] = {}
    for k in fixed:
        key = str(k) if k < 3 else "3+"
        spread[key] = spread.get(key, 0) + 1
    return {"runs": n,
            "execution_success_rate": round(sum(f["success"] for f in facts) / n, 3),
            "single_pass_success_rate": round(sum(f["first_passed"] for f in facts) / n, 3),
            "average_refinement_iterations": round(mean(fixed), 2) if fixed else None,
            "refinements_to_success": spread,
            "initial_error_density": round(initial / n, 3),
            "error_reduction_ratio": round((initial - final) / initial, 3) if initial else None,
            "execution_stability_rate": round(sum(f["clean_executions"] for f in facts) / executions, 3)
            if executions else None}


def metrics_lines(metrics: dict[str, Any]) -> list[str]:
    """The metrics as lines under a batch table."""
    if not metrics.get("runs"):
        return []
    labels = (("execution_success_rate", "execution success rate"), ("single_pass_success_rate", "single-pass"),
              ("average_refinement_iterations", "average refinement iterations"),
              ("initial_error_density", "initial error density"), ("error_reduction_ratio", "error reduction ratio"),
              ("execution_stability_rate", "execution stability rate"))
    parts = [f"{label} {'-' if metrics.get(key) is None else metrics[key]}" for key, label in labels]
    return ["metrics (docs/STRATEGY.md): " + " · ".join(parts)]
