"""`codeduet runs`: the saved runs as a table, newest first."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from agents.cli.common import console
from agents.loop.errors import CodeduetError


def list_runs(root: Path, scenario: str | None, limit: int | None = None) -> None:
    """Table of saved runs, newest first: run id (it starts with the start time), scenario, status, counts, path."""
    from agents.record.display import show_table
    from agents.record.transcript import load_transcript
    from agents.replay.find import find_runs
    from agents.replay.timeline import duration

    dirs = find_runs(root, scenario)
    base = root / scenario if scenario else root
    if not dirs:
        console.print(f"no runs under {base}", soft_wrap=True)
        return
    shown = dirs[:limit] if limit else dirs
    table = Table(title=f"runs under {base}, newest first" + (f" ({len(shown)} of {len(dirs)})"
                                                                if len(shown) < len(dirs) else ""))
    for col in ("run", "scenario", "status", "attempts", "turns", "executions", "time", "path"):
        table.add_column(col, no_wrap=col in ("run", "scenario", "status", "path"))
    for d in shown:
        try:
            t = load_transcript(d)
        except CodeduetError:
            table.add_row(d.name, d.parent.name, "unreadable", "", "", "", "", shown_path(d))
            continue
        tot = t.get("totals") or {}
        attempts = str(tot.get("attempts") or 1) + (f" (kept {t['chosen_attempt']})"
                                                     if (tot.get("attempts") or 1) > 1 else "")
        table.add_row(d.name, d.parent.name, t.get("status", "?"), attempts, str(tot.get("turns", "")),
                      str(tot.get("executions", "")), duration(tot.get("seconds")), shown_path(d))
    show_table(console, table, optional=("executions", "attempts", "time", "turns"))


def shown_path(path: Path) -> str:
    """A path relative to the current folder when it is below it, else absolute: what a person types next."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
