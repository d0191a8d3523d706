"""What the CLI commands do, so run.py stays a thin typer app."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from rich.console import Console
from rich.table import Table

from agents.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, CodeduetError

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def exit_code_for(status: str) -> int:
    """0 success, 1 ran but did not succeed."""
    return EXIT_OK if status == "success" else EXIT_FAILED


@contextmanager
def cli_errors() -> Iterator[None]:
    """Turn CodeduetError into one line on stderr and its exit code; Ctrl-C into 130."""
    try:
        yield
    except CodeduetError as exc:
        err_console.print(f"[red]error:[/] {exc}", soft_wrap=True)
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/]")
        raise SystemExit(130) from None


def install_signal_handlers() -> None:
    """SIGTERM behaves like Ctrl-C; a second Ctrl-C forces the exit."""
    state = {"count": 0}

    def on_signal(signum: int, frame: Any) -> None:
        state["count"] += 1
        if state["count"] > 1:
            os._exit(130)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


def summary(result: Any, seconds: float) -> dict[str, Any]:
    """The --json summary of one run."""
    t = result.totals
    return {"run_dir": str(result.run_dir), "status": result.status, "reason": result.reason,
            "attempts": t.get("attempts", 1), "turns": t.get("turns", 0), "executions": t.get("executions", 0),
            "rejected_repeats": t.get("rejected_repeats", 0),
            "tokens": (t.get("prompt_tokens") or 0) + (t.get("completion_tokens") or 0),
            "seconds": round(seconds, 3)}


def report_result(result: Any, console: Console, note: str = "") -> int:
    """The closing line `run: <dir> status=<status>`, the error line if any, and the exit code."""
    console.print(f"run: {result.run_dir} status={result.status}{note}", soft_wrap=True)
    if result.error is not None:
        err_console.print(f"[red]error:[/] {result.error}", soft_wrap=True)
        return result.error.exit_code
    return exit_code_for(result.status)


def run_one(path: Path, opts: Any, as_json: bool, human: Any = None) -> int:
    """Run one scenario in this process; print the closing line or the JSON summary."""
    from agents.conversation import run_scenario
    from agents.display import ConsoleDisplay, NullDisplay
    from agents.scenario import load_scenario

    scenario = load_scenario(path)
    started = time.perf_counter()
    display = NullDisplay() if as_json else ConsoleDisplay(console)
    result = run_scenario(scenario, opts, display=display, human=human)
    if as_json:
        print(json.dumps(summary(result, time.perf_counter() - started)))
        if result.error is not None:
            err_console.print(f"[red]error:[/] {result.error}", soft_wrap=True)
            return result.error.exit_code
        return exit_code_for(result.status)
    return report_result(result, console)


def run_batch(paths: list[Path], extra_args: list[str], jobs: int) -> int:
    """Run several scenarios, each as its own `run.py run --json` process, and print a summary table."""
    from agents.scenario import load_scenario

    for p in paths:  # validate everything before starting anything
        load_scenario(p)
    run_py = Path(__file__).resolve().parent.parent / "run.py"
    env = dict(os.environ)
    if jobs > 1:  # llama.cpp's spinning OpenMP threads collapse when several runs share the cores
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")

    def one(path: Path) -> dict[str, Any]:
        proc = subprocess.run([sys.executable, str(run_py), "run", str(path), "--json", *extra_args],
                              capture_output=True, text=True, env=env)
        try:
            data = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            data = {"status": "error", "reason": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
        data.update(scenario=str(path), exit_code=proc.returncode)
        return data

    rows = []
    with console.status(f"running {len(paths)} scenarios with {jobs} job(s)…"):
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for row in pool.map(one, paths):
                rows.append(row)
                console.print(f"  {row['scenario']}: {row['status']}", soft_wrap=True)
    table = Table(title="batch summary")
    for col in ("scenario", "status", "attempts", "turns", "executions", "seconds", "run_dir"):
        table.add_column(col)
    for r in rows:
        table.add_row(*(str(r.get(c, "")) for c in ("scenario", "status", "attempts", "turns", "executions", "seconds",
                                                    "run_dir")))
    console.print(table)
    ok = sum(r["status"] == "success" for r in rows)
    console.print(f"batch: {ok}/{len(rows)} succeeded")
    if any(r["exit_code"] in (EXIT_BAD_INPUT, 3) for r in rows):
        return max(r["exit_code"] for r in rows if r["exit_code"] in (EXIT_BAD_INPUT, 3))
    return EXIT_OK if ok == len(rows) else EXIT_FAILED


def list_runs(root: Path, scenario: str | None) -> None:
    """Table of saved runs: scenario, run (its id starts with the start time), status, turns, time."""
    from agents.transcript import load_transcript

    table = Table(title=f"runs under {root}")
    for col in ("scenario", "run", "status", "attempts", "turns", "executions", "seconds"):  # the run id holds the start time
        table.add_column(col, overflow="fold", no_wrap=col in ("run", "status"))
    base = root / scenario if scenario else root
    dirs = sorted(p.parent for p in base.glob("**/events.jsonl"))
    for d in dirs:
        try:
            t = load_transcript(d)
        except CodeduetError:
            continue
        tot = t.get("totals") or {}
        attempts = str(tot.get("attempts") or 1) + (f" (kept {t['chosen_attempt']})"
                                                     if (tot.get("attempts") or 1) > 1 else "")
        table.add_row(d.parent.name, d.name, t.get("status", "?"), attempts, str(tot.get("turns", "")),
                      str(tot.get("executions", "")), str(tot.get("seconds", "")))
    console.print(table if dirs else f"no runs under {base}")
