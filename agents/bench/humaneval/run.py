"""`bench humaneval`: pass@1 of one assistant turn vs the self-debug loop, interleaved per problem, resumable.

Each problem becomes a Scenario (humaneval/scenario.py) run by the ordinary run_scenario; the loop sees only
execution errors and the docstring's own examples. The hidden check() runs afterwards, in a fresh sandbox
container (humaneval/score.py), and only to score.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from agents.bench.common import git_commit, machine
from agents.bench.humaneval.config import BenchConfig
from agents.bench.humaneval.problem import ModelFor, run_mode
from agents.bench.humaneval.scenario import PROMPT_VERSION, load_problems, problem_number
from agents.bench.humaneval.stats import summarize, summary_table
from agents.bench.humaneval.visible import validated_examples
from agents.feedback.prompts import PROMPT_VERSION as FEEDBACK_VERSION
from agents.loop.errors import BadInputError
from agents.models.config import build_provider
from agents.sandbox import make_executor
from agents.sandbox.config import SandboxConfig

RESULTS, SUMMARY, META, VISIBLE = "results.jsonl", "summary.json", "meta.json", "visible_tests.json"


def resolve_out(cfg: BenchConfig) -> Path:
    """The output folder: --out, the latest bench-out/humaneval-* for --resume, or a new timestamped one."""
    root = Path.cwd() / "bench-out"
    if cfg.out is not None:
        out = Path(cfg.out)
    elif cfg.resume:
        previous = sorted(root.glob("humaneval-*"))
        if not previous:
            raise BadInputError(f"--resume: no earlier run under {root}; pass --out DIR")
        out = previous[-1]
    else:
        out = root / f"humaneval-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    if (out / RESULTS).is_file() and not cfg.resume:
        raise BadInputError(f"{out} already holds results: add --resume to continue it, or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    return out


def read_records(out: Path) -> list[dict[str, Any]]:
    """Records of finished (problem, mode) pairs; a line cut by a kill is ignored."""
    path = out / RESULTS
    records = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records


def _append(out: Path, record: dict[str, Any]) -> None:
    with open(out / RESULTS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def check_meta(out: Path, cfg: BenchConfig, meta: dict[str, Any]) -> None:
    """On resume, refuse settings that would mix two different experiments in one results file."""
    path = out / META
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        for key in ("mode", "max_auto_reply", "model", "team", "loop_strategy", "shared_single", "prompt_version",
                    "only"):
            if old.get(key, False if key == "team" else None) != meta.get(key):  # (no "team": an older pair run)
                raise BadInputError(f"--resume: {out} was run with {key}={old.get(key)!r}, not {meta.get(key)!r}")
        meta["started_at"] = old.get("started_at", meta["started_at"])
        meta["resumed_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    path.write_text(json.dumps(meta, indent=2), encoding="utf-8")


def examples_for(problems: list[dict[str, Any]], out: Path, sandbox: SandboxConfig) -> dict[str, Any]:
    """Visible tests per task, validated once in the sandbox and cached in visible_tests.json."""
    path = out / VISIBLE
    cached = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    missing = [p for p in problems if p["task_id"] not in cached]
    if missing:
        executor = make_executor(sandbox, out / "scoring" / "_validate", f"he-validate-{os.getpid()}")
        try:
            executor.start()
            cached.update(validated_examples(missing, executor))
        finally:
            executor.stop()
        path.write_text(json.dumps(cached, indent=1), encoding="utf-8")
    return cached


def run_bench(console: Console, cfg: BenchConfig, model_for: ModelFor | None = None,
              problems: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Run (or resume) the benchmark; returns the summary (also written to summary.json).

    model_for(problem, mode) may give each scenario its own model entry (tests use scripted replies);
    problems overrides the --limit/--offset slice."""
    modes = cfg.modes
    loop_strategy = cfg.loop_strategy  # a bad --strategy key fails here, before any output folder is made
    problems = problems if problems is not None else load_problems(cfg.limit, cfg.offset)
    if cfg.only is not None:
        outside = sorted(set(cfg.only) - {problem_number(p) for p in problems})
        if outside:
            raise BadInputError(f"--only {','.join(map(str, outside))}: not among the selected problems "
                                f"(--offset {cfg.offset}, --limit {cfg.limit})")
        problems = [p for p in problems if problem_number(p) in cfg.only]
    out = resolve_out(cfg)
    meta = {"mode": cfg.mode, "max_auto_reply": cfg.max_auto_reply, "model": cfg.model, "team": cfg.team,
            "loop_strategy": loop_strategy, "shared_single": cfg.shared_single, "prompt_version": PROMPT_VERSION,
            "feedback_prompt_version": FEEDBACK_VERSION, "limit": cfg.limit, "offset": cfg.offset, "only": cfg.only,
            "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": git_commit(),
            "machine": machine(), "model_info": _model_info(cfg.model) if model_for is None else "per-problem"}
    check_meta(out, cfg, meta)
    visible = examples_for(problems, out, SandboxConfig())
    records = read_records(out)
    done = {(r["task_id"], r["mode"]) for r in records}
    todo = [p for p in problems if any((p["task_id"], m) not in done for m in modes)]
    console.print(f"HumanEval: {len(problems)} problems, mode {cfg.mode}{' (team)' * cfg.team}, "
                  f"max_auto_reply {cfg.max_auto_reply}, "
                  f"{len(problems) - len(todo)} already done; output in {out}", soft_wrap=True)
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
    try:
        with Progress(*columns, console=console, speed_estimate_period=24 * 3600) as progress:
            bar = progress.add_task("humaneval", total=len(problems), completed=len(problems) - len(todo),
                                    rate=_rate(records))
            for problem in todo:
                order = modes if problem_number(problem) % 2 == 0 else modes[::-1]
                if cfg.shared_single:
                    order = ["loop"]
                line = []
                for mode in order:
                    if (problem["task_id"], mode) in done and not cfg.shared_single:
                        continue
                    new = run_mode(problem, visible[problem["task_id"]], mode, cfg.max_auto_reply, out, cfg.model,
                                   model_for, with_single=cfg.shared_single, attempts=cfg.attempts,
                                   strategy=cfg.strategy, team=cfg.team)
                    if cfg.shared_single and not any(r["mode"] == "single" for r in new):  # candidates: on its own
                        new += run_mode(problem, visible[problem["task_id"]], "single", cfg.max_auto_reply, out,
                                        cfg.model, model_for, attempts=cfg.attempts, strategy=cfg.strategy)
                    for record in sorted(new, key=lambda r: r["mode"] != "single"):
                        _append(out, record)
                        records.append(record)
                        line.append(f"{record['mode']} {'[green]✔[/]' if record['passed'] else '[red]✘[/]'} "
                                    f"({record['turns']} turn{'s' * (record['turns'] != 1)}, "
                                    f"{record['seconds']:.0f}s)")
                progress.console.print(f"{problem['task_id']:>14}  " + "  ".join(line))
                progress.update(bar, advance=1, rate=_rate(records))
    finally:
        summary = _write_summary(out, records, meta)
    console.print(summary_table(summary))
    console.print(f"results: {out / RESULTS}\nsummary: {out / SUMMARY}", soft_wrap=True)
    return summary


def _rate(records: list[dict[str, Any]]) -> str:
    parts = []
    for mode in ("single", "loop"):
        rows = [r for r in records if r["mode"] == mode]
        if rows:
            parts.append(f"{mode} {100 * sum(r['passed'] for r in rows) / len(rows):.0f}%")
    return " ".join(parts) or "-"


def _model_info(model: str | None) -> dict[str, Any]:
    try:
        return build_provider(model).describe()
    except Exception as exc:  # describing is best effort; the run itself reports real problems
        return {"name": model, "error": str(exc).splitlines()[0]}


def _write_summary(out: Path, records: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    summary = {"meta": meta, **summarize(records)}
    (out / SUMMARY).write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


def main(console: Console, cfg: BenchConfig) -> int:
    """CLI entry: run the benchmark, print the table; 0 when every selected problem was run and scored."""
    run_bench(console, cfg)
    return 0

