"""The team paper's metrics, for the pair and the team alike: per run from its transcript (`run_facts`, in each
`run --json` line), and over a batch (`batch_metrics`, under the batch table and as the last `--json` line).
docs/STRATEGY.md defines each one and says where codeduet counts differently.

An execution's errors are its failed acceptance checks (with no checks: 1 when its last block exited non-zero);
a run's first execution is the first report of attempt 1, its final one the last report of the attempt it kept."""

from __future__ import annotations

from statistics import mean
from typing import Any

from agents.feedback.compiler_output import summarize

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
    first_reply = next((m for m in t.get("messages") or [] if m.get("role") == "assistant" and m.get("code_blocks")),
                       {})
    last_runs = (final[-1]["outcome"].get("executions") or []) if final else []
    success = t.get("status") == "success"
    return {"setup": t.get("setup") or ("team" if team else "pair"), "success": success,
            "first_lines": sum(1 for b in first_reply.get("code_blocks") or [] for ln in str(b.get("code")).splitlines()
                               if ln.strip()),
            # the paper's execution success: the final program built and ran without an error (right or not); a
            # file that only was saved (a C library without main) is built by its check: its errors count too. A
            # run whose checks all passed built and ran its program, whatever an extra block did (the model's
            # expected output sent as ```sh, exit 127, beside a C file that passed every hidden test)
            "final_ran": success or bool(last_runs) and all(clean(e) for e in last_runs)
            and not any(build_or_run_error(c) for c in final[-1]["outcome"].get("checks") or []),
            "abnormal": any(e.get("timed_out") or e.get("oom_killed") or e.get("sandbox_lost") for e in runs),
            "first_passed": bool(reports) and bool(reports[0]["outcome"].get("success")),
            "refinements": max(len(reports) - 1, 0), "initial_errors": first_errors,
            "final_errors": errors(final[-1]["outcome"]) if final else None,
            "executions": len(runs),
            # a server stopped as servers are ran cleanly too (agents/sandbox/servers.py)
            "clean_executions": sum(1 for e in runs if clean(e))}


RAN_BADLY = ("Traceback (most recent call last)", "before it listened on port", "uncaught exception",
             "SyntaxError", "panic: ")
"""Words of a failed check whose program did not build or crashed (beside the compiler's and sanitizers' errors
that agents/feedback/compiler_output.py finds): a Python traceback, a server that died before listening, a page's
error."""


def build_or_run_error(check: dict[str, Any]) -> bool:
    """A failed check that failed because the program did not build or crashed, not because its answer was wrong."""
    detail = str(check.get("detail") or "")
    return not check.get("passed") and (summarize(detail) is not None or any(w in detail for w in RAN_BADLY))


def clean(execution: dict[str, Any]) -> bool:
    """An execution that ran to its end without an error: exit 0, or a server stopped as servers are
    (agents/sandbox/servers.py), or a command-line tool's usage exit; not stopped at a limit."""
    ok = execution.get("exit_code") == 0 or execution.get("server") or execution.get("usage")
    return bool(ok) and not execution.get("timed_out") and not execution.get("oom_killed")


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
        key = str(k) if k <= 3 else "more"
        spread[key] = spread.get(key, 0) + 1
    lines = sum(f.get("first_lines") or 0 for f in facts)
    return {"runs": n,
            "execution_success_rate": round(sum(f["success"] for f in facts) / n, 3),
            "single_pass_success_rate": round(sum(f["first_passed"] for f in facts) / n, 3),
            "average_refinement_iterations": round(mean(fixed), 2) if fixed else None,
            "refinements_to_success": spread,
            "paper_execution_success_rate": round(sum(bool(f.get("final_ran")) for f in facts) / n, 3),
            "initial_error_density": round(initial / n, 3),
            "initial_errors_per_line": round(initial / lines, 4) if lines else None,
            "runs_within_limits": round(sum(not f.get("abnormal") for f in facts) / n, 3),
            "error_reduction_ratio": round((initial - final) / initial, 3) if initial else None,
            "execution_stability_rate": round(sum(f["clean_executions"] for f in facts) / executions, 3)
            if executions else None}


def metrics_lines(metrics: dict[str, Any]) -> list[str]:
    """The metrics as lines under a batch table."""
    if not metrics.get("runs"):
        return []
    labels = (("execution_success_rate", "execution success rate"), ("single_pass_success_rate", "single-pass"),
              ("paper_execution_success_rate", "ran without errors (the paper's ESR)"),
              ("average_refinement_iterations", "average refinement iterations"),
              ("initial_error_density", "initial error density"),
              ("initial_errors_per_line", "initial errors per line"),
              ("error_reduction_ratio", "error reduction ratio"),
              ("execution_stability_rate", "execution stability rate"), ("runs_within_limits", "runs within limits"))
    parts = [f"{label} {'-' if metrics.get(key) is None else metrics[key]}" for key, label in labels]
    return ["metrics (docs/STRATEGY.md): " + " · ".join(parts)]
