"""What the CLI's commands share, and the library's terminal side of a finished run: the consoles, one line and an
exit code per error, Ctrl-C and SIGTERM, `--languages`, a run's closing line and its JSON summary."""

from __future__ import annotations

import json
import os
import signal
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from rich.console import Console
from rich.markup import escape

from agents.loop.errors import EXIT_INTERRUPTED, BadInputError, CodeduetError, exit_code_for

if TYPE_CHECKING:
    from agents.loop.run_setup import RunResult

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


@contextmanager
def cli_errors() -> Iterator[None]:
    """Turn CodeduetError into one line on stderr and its exit code; Ctrl-C into 130."""
    try:
        yield
    except CodeduetError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/]")
        raise SystemExit(EXIT_INTERRUPTED) from None


def install_signal_handlers() -> None:
    """SIGTERM behaves like Ctrl-C; a second Ctrl-C forces the exit."""
    state = {"count": 0}

    def on_signal(signum: int, frame: Any) -> None:
        state["count"] += 1
        if state["count"] > 1:
            os._exit(EXIT_INTERRUPTED)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


def session_name(value: str | None) -> str | None:
    """`--session`: kernel or process (None when not given); anything else is bad input."""
    if value is None or value in ("kernel", "process"):
        return value
    raise BadInputError(f"--session is kernel or process, not {value!r}")


def language_list(text: str | None) -> list[str] | None:
    """`--languages c,go` as names (aliases such as c++ or js accepted); BadInputError on an unknown one."""
    if text is None:
        return None
    from agents.sandbox.languages import normalize

    try:
        return list(normalize([part for part in text.replace(",", " ").split() if part]))
    except ValueError as exc:
        raise BadInputError(f"--languages: {exc}") from None


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
    from agents.record.display import LIVE_ENV, ConsoleDisplay, FileDisplay, NullDisplay

    return ConsoleDisplay(console) if not as_json else FileDisplay() if os.environ.get(LIVE_ENV) else NullDisplay()


def print_ending(result: RunResult, console: Console, seconds: float, as_json: bool, note: str = "") -> int:
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
            "changed_files": [{"path": f["path"], "change": f["change"]} for f in result.changed_files],
            "metrics": facts_of(result)}


def facts_of(result: RunResult) -> dict[str, Any] | None:
    """The run's facts for the team paper's metrics (agents/record/metrics.py); None when its transcript is
    unreadable."""
    from agents.record.metrics import run_facts
    from agents.record.transcript import load_transcript

    try:
        return run_facts(load_transcript(result.run_dir))
    except (CodeduetError, OSError, TypeError):
        return None
