"""`codeduet replay`: load a run folder strictly, then show, re-execute, export or resume it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from agents.loop.errors import BadInputError
from agents.record.run_folder import EVENTS, TRANSCRIPT
from agents.record.transcript import load_transcript
from agents.replay.find import resolve_run


def load_run(target: Path) -> dict[str, Any]:
    """A run folder, its transcript.json or its events.jsonl -> the transcript (warnings go to stderr)."""
    from agents.cli.common import warn

    target = Path(target)
    if target.name == EVENTS and target.is_file():
        target = target.parent
    return load_transcript(target, warn=warn)


def _check_options(step: bool, execute: bool, html: Path | None, resume: bool, message: str | None,
                   model: str | None, max_auto_reply: int | None, image: str | None, as_json: bool) -> None:
    """Options that only make sense with another one are one-line errors, not silently ignored."""
    if as_json and (not resume or execute or html is not None):
        raise BadInputError("--json only applies with --resume (not with --execute or --html)")
    if not resume:
        for flag, value in (("--message", message), ("--model", model), ("--max-auto-reply", max_auto_reply)):
            if value is not None:
                raise BadInputError(f"{flag} only applies with --resume")
    if image is not None and not execute:
        raise BadInputError("--image only applies with --execute")
    if step and (execute or html is not None or resume):
        raise BadInputError("--step only applies when showing a run (without --execute, --html or --resume)")


def replay_command(console: Console, target: str | Path, *, root: Path | None = None, step: bool = False,
                   execute: bool = False, html: Path | None = None, resume: bool = False, message: str | None = None,
                   model: str | None = None, max_auto_reply: int | None = None, image: str | None = None,
                   as_json: bool = False) -> int:
    """Show a saved run (default), or write --html, --execute its blocks again, --resume it (as_json: print the
    resumed run's JSON summary line, as `run --json` does); the exit code.
    `target` is anything agents/replay/find.py resolves (run folder, id or prefix, scenario, latest, -N)."""
    from agents.cli.common import err_console
    from agents.record.paths import default_workspaces

    _check_options(step, execute, html, resume, message, model, max_auto_reply, image, as_json)
    run_dir = resolve_run(target, root or default_workspaces())
    if Path(target).expanduser().resolve() not in (run_dir.resolve(), (run_dir / TRANSCRIPT).resolve(),
                                                   (run_dir / EVENTS).resolve()):
        err_console.print(f"run: {run_dir}", soft_wrap=True, highlight=False)  # which run an id or name meant
    transcript = load_run(run_dir)
    if not (execute or html is not None or resume):
        from agents.replay.show import show_run

        show_run(console, transcript, step=step)
        return 0
    code = 0
    if html is not None:
        from agents.replay.html import write_html

        path = write_html(transcript, html)
        console.print(f"wrote {path}", soft_wrap=True)
    if execute:
        from agents.replay.execute import execute_run

        code = max(code, execute_run(console, transcript, image=image))
    if resume:
        from agents.replay.resume import resume_run

        code = max(code, resume_run(console, transcript, message=message, model=model,
                                    max_auto_reply=max_auto_reply, as_json=as_json))
    return code
