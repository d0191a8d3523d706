"""The terminal side of a finished run, shared by the CLI commands and the library: consoles, closing line,
exit code."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from rich.console import Console

from agents.status import exit_code_for

if TYPE_CHECKING:
    from agents.conversation import RunResult

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def warn(line: str) -> None:
    """One warning line on stderr (a run goes on)."""
    err_console.print(f"[yellow]warning:[/] {line}", soft_wrap=True)


def report_result(result: RunResult, console: Console, note: str = "") -> int:
    """The closing line `run: <dir> status=<status>`, the error line if any, and the exit code."""
    console.print(f"run: {result.run_dir} status={result.status}{note}", soft_wrap=True)
    return result_exit_code(result)


def run_display(console: Console, as_json: bool) -> Any:
    """How a run is shown: live on the console; with --json nothing (the web UI's runs keep the reply being
    generated in the run folder)."""
    from agents.display import LIVE_ENV, ConsoleDisplay, FileDisplay, NullDisplay

    return ConsoleDisplay(console) if not as_json else FileDisplay() if os.environ.get(LIVE_ENV) else NullDisplay()


def close_run(result: RunResult, console: Console, seconds: float, as_json: bool, note: str = "") -> int:
    """The end of a run the CLI started (`run`, `replay --resume`): the JSON summary line or the closing line; the
    exit code."""
    if as_json:
        print(json.dumps(summary(result, seconds)))
        return result_exit_code(result)
    return report_result(result, console, note)


def result_exit_code(result: RunResult) -> int:
    """The run's error as one line on stderr (if it had one), and its exit code."""
    if result.error is not None:
        err_console.print(f"[red]error:[/] {result.error}", soft_wrap=True)
        return result.error.exit_code
    if result.status == "interrupted":
        err_console.print("[yellow]interrupted[/]")
    return exit_code_for(result.status)


def summary(result: RunResult, seconds: float) -> dict[str, Any]:
    """The --json summary of one run."""
    t = result.totals
    return {"run_dir": str(result.run_dir), "status": result.status, "reason": result.reason,
            "attempts": t.get("attempts", 1), "turns": t.get("turns", 0), "executions": t.get("executions", 0),
            "rejected_repeats": t.get("rejected_repeats", 0),
            "tokens": (t.get("prompt_tokens") or 0) + (t.get("completion_tokens") or 0),
            "seconds": round(seconds, 3),
            "changed_files": [{"path": f["path"], "change": f["change"]} for f in result.changed_files]}
