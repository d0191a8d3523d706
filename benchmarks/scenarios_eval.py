"""Scenario benchmark: run every scenarios/*.yaml that uses the local model; success rate and mean turns.

    python -m benchmarks.scenarios_eval [--n 2] [--only primes,word_frequency] [--out results.json]

Each run goes through agents.loop.conversation.run_scenario (real AG2 loop, real sandbox) with a NullDisplay and a
private workspaces folder, so the numbers measure the product as shipped: the prompt, the feedback and the model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agents.record.paths import PROJECT_ROOT

SCENARIOS_DIR = PROJECT_ROOT / "scenarios"
LOCAL_PROVIDER = "llama_cpp"


def model_provider_of(scenario: Any, override: str | None = None) -> str | None:
    """The provider name the scenario would run with (inline entry, configs/llm.yaml name, or the default)."""
    from agents.models.config import load_models_file

    spec = override if override is not None else scenario.model
    if isinstance(spec, dict):
        return str(spec.get("provider"))
    models, _, _ = load_models_file()
    entry = models.models.get(spec or models.default)
    return str(entry.get("provider")) if entry else None


def select_scenarios(folder: Path = SCENARIOS_DIR, only: list[str] | None = None,
                     model: str | None = None) -> list[Any]:
    """Scenarios in `folder` that use the local model (with --model: every one that names no inline model)."""
    from agents.scenario.spec import load_scenario

    chosen = []
    for path in sorted(folder.glob("*.yaml")):
        scenario = load_scenario(path)
        if only and scenario.name not in only and path.stem not in only:
            continue
        if model is not None:
            if not isinstance(scenario.model, dict):
                chosen.append(scenario)
        elif model_provider_of(scenario) == LOCAL_PROVIDER:
            chosen.append(scenario)
    return chosen


def run_one(scenario: Any, workspaces: Path, model: str | None = None,
            max_auto_reply: int | None = None, attempts: int | None = None) -> dict[str, Any]:
    """One run of one scenario; a row of the table."""
    from agents.loop.conversation import RunOptions, run_scenario
    from agents.record.display import NullDisplay

    started = time.perf_counter()
    result = run_scenario(scenario, RunOptions(model=model, max_auto_reply=max_auto_reply, workspaces=workspaces,
                                               attempts=attempts), NullDisplay())
    totals = result.totals
    messages = json.loads(result.transcript.read_text(encoding="utf-8")).get("messages", [])
    extras = [(m.get("usage") or {}).get("extra") or {} for m in messages]
    cut = sum(1 for x in extras if x.get("finish_reason") in ("length", "repetition")
              and not (x.get("loop") or {}).get("salvaged")) + totals.get("rejected_cut", 0)
    return {"scenario": scenario.name, "status": result.status, "turns": totals.get("turns", 0),
            "executions": totals.get("executions", 0), "failed_executions": totals.get("failed_executions", 0),
            "completion_tokens": totals.get("completion_tokens", 0), "cut_replies": cut,
            "seconds": round(time.perf_counter() - started, 1), "run_dir": str(result.run_dir),
            "reason": result.reason, "attempts": totals.get("attempts", 1),
            "rejected_repeats": totals.get("rejected_repeats", 0), "rejected_cut": totals.get("rejected_cut", 0),
            "rejected_no_code": totals.get("rejected_no_code", 0), "blocked_repeats": totals.get("blocked_repeats", 0),
            "identical_resends_executed": identical_resends_executed(messages),
            "salvaged_replies": totals.get("salvaged_replies", 0), "refused_files": totals.get("refused_files", 0),
            "saved_files": totals.get("saved_files", 0), "prompt_tokens": totals.get("prompt_tokens", 0)}


def identical_resends_executed(messages: list[dict[str, Any]]) -> int:
    """Executed replies whose code (normalized) had already been executed earlier in the run."""
    from agents.loop.repeats import fingerprint, reply_code

    seen, count, last_reply = set(), 0, None
    for m in messages:
        if m.get("role") == "execution" and (m.get("outcome") or {}).get("executions"):
            code = reply_code(last_reply)
            if code is not None:
                key = fingerprint(code)
                count += key in seen
                seen.add(key)
        elif m.get("role") == "assistant":
            last_reply = m.get("content")
    return count


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Success rate and mean turns over all runs (and per scenario)."""
    if not rows:
        return {"runs": 0, "successes": 0, "success_rate": 0.0, "mean_turns": 0.0, "seconds": 0.0}
    ok = [r for r in rows if r["status"] == "success"]
    per: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        per.setdefault(r["scenario"], []).append(r)
    return {
        "runs": len(rows), "successes": len(ok), "success_rate": round(len(ok) / len(rows), 3),
        "mean_turns": round(statistics.mean(r["turns"] for r in rows), 2),
        "mean_attempts": round(statistics.mean(r.get("attempts", 1) for r in rows), 2),
        "mean_seconds": round(statistics.mean(r["seconds"] for r in rows), 1),
        "rejected_repeats": sum(r.get("rejected_repeats", 0) for r in rows),
        "rejected_cut": sum(r.get("rejected_cut", 0) for r in rows),
        "rejected_no_code": sum(r.get("rejected_no_code", 0) for r in rows),
        "blocked_repeats": sum(r.get("blocked_repeats", 0) for r in rows),
        "identical_resends_executed": sum(r.get("identical_resends_executed", 0) for r in rows),
        **{key: sum(r.get(key, 0) for r in rows) for key in
           ("salvaged_replies", "refused_files", "saved_files", "prompt_tokens", "completion_tokens")},
        "mean_turns_success": round(statistics.mean(r["turns"] for r in ok), 2) if ok else None,
        "seconds": round(sum(r["seconds"] for r in rows), 1),
        "per_scenario": {name: {"success_rate": round(sum(r["status"] == "success" for r in rs) / len(rs), 3),
                                "mean_turns": round(statistics.mean(r["turns"] for r in rs), 2)}
                         for name, rs in per.items()},
    }


def print_table(rows: list[dict[str, Any]], summary: dict[str, Any], console: Any = None) -> None:
    """A rich table: scenario, status, turns, executions, seconds; then the totals line."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    table = Table(title="scenarios with the local model")
    for col in ("scenario", "status", "attempts", "turns", "executions", "rejected", "resent+run", "seconds"):
        table.add_column(col, justify="left" if col in ("scenario", "status") else "right")
    for r in rows:
        style = "green" if r["status"] == "success" else "red"
        table.add_row(r["scenario"], f"[{style}]{r['status']}[/]", str(r.get("attempts", 1)), str(r["turns"]),
                      str(r["executions"]), str(r.get("rejected_repeats", 0)),
                      str(r.get("identical_resends_executed", 0)), f"{r['seconds']:.1f}")
    console.print(table)
    console.print(f"prompt {summary.get('prompt_version')}: success {summary['successes']}/{summary['runs']} "
                  f"({summary['success_rate']:.0%}), mean attempts {summary.get('mean_attempts')}, "
                  f"mean turns {summary['mean_turns']}, mean {summary.get('mean_seconds')} s, "
                  f"repeats rejected {summary.get('rejected_repeats')}, identical resends executed "
                  f"{summary.get('identical_resends_executed')}, "
                  f"{summary['seconds']:.0f} s in all")


def evaluate(n: int = 1, only: list[str] | None = None, model: str | None = None,
             workspaces: Path | None = None, out: Path | None = None, console: Any = None,
             folder: Path = SCENARIOS_DIR, max_auto_reply: int | None = None,
             exclude: list[str] | None = None, attempts: int | None = None,
             strategy: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the selected scenarios n times each; print the table, write JSON if asked, return everything."""
    from agents.feedback.prompts import PROMPT_VERSION

    workspaces = workspaces or Path(tempfile.mkdtemp(prefix="codeduet-scenarios-eval-"))
    scenarios = [with_strategy(s, strategy) for s in select_scenarios(folder, only, model)
                 if s.name not in (exclude or [])]
    rows = []
    for rep in range(n):
        for scenario in scenarios:
            row = run_one(scenario, workspaces, model, max_auto_reply, attempts)
            row["repeat"] = rep
            rows.append(row)
            if console is not None:
                console.print(f"{scenario.name}: {row['status']} attempts={row['attempts']} turns={row['turns']} "
                              f"rejected={row['rejected_repeats']} cut={row['cut_replies']} {row['seconds']:.0f}s",
                              highlight=False)
                console.file.flush()
    summary = {"prompt_version": PROMPT_VERSION, "model": model or "default", "n": n,
               "max_auto_reply": max_auto_reply, "attempts": attempts, "strategy": strategy or {}, "commit": _commit(),
               "workspaces": str(workspaces), **summarize(rows)}
    print_table(rows, summary, console)
    report = {"summary": summary, "runs": rows}
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


def with_strategy(scenario: Any, overrides: dict[str, Any] | None) -> Any:
    """The scenario with some `strategy:` keys replaced, checked by the same strict schema as a scenario file."""
    from agents.scenario.strategy_config import StrategyConfig
    from agents.scenario.yamlio import validate

    if not overrides:
        return scenario
    strategy = validate(StrategyConfig, {**scenario.strategy.model_dump(), **overrides}, "--strategy", {},
                        prefix=("strategy",))
    return scenario.model_copy(update={"strategy": strategy})


def _commit() -> str | None:
    from agents.bench.common import git_commit

    return git_commit()


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; exit 0 when every run succeeded, else 1."""
    from rich.console import Console

    from agents.loop.run_options import parse_overrides

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1, help="runs per scenario")
    parser.add_argument("--only", default="", help="comma-separated scenario names")
    parser.add_argument("--exclude", default="", help="comma-separated scenario names to skip")
    parser.add_argument("--max-auto-reply", type=int, default=None, help="override each scenario's reply limit")
    parser.add_argument("--attempts", type=int, default=None, help="override each scenario's strategy.attempts")
    parser.add_argument("--strategy", action="append", default=[], metavar="KEY=VALUE",
                        help="override a strategy: key in every scenario (repeatable), e.g. repair_context=last")
    parser.add_argument("--model", default=None, help="a configs/llm.yaml name instead of each scenario's model")
    parser.add_argument("--workspaces", type=Path, default=None, help="root for run folders (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=None, help="write the rows and summary as JSON here")
    args = parser.parse_args(argv)
    only = [s for s in args.only.split(",") if s] or None
    exclude = [s for s in args.exclude.split(",") if s] or None
    from agents.loop.errors import CodeduetError

    try:
        report = evaluate(args.n, only, args.model, args.workspaces, args.out, Console(),
                          max_auto_reply=args.max_auto_reply, exclude=exclude, attempts=args.attempts,
                          strategy=parse_overrides(args.strategy))
    except CodeduetError as exc:
        Console(stderr=True).print(f"[red]error:[/] {exc}", highlight=False)
        return 2
    return 0 if report["summary"]["success_rate"] == 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
