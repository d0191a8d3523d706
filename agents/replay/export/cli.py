"""`codeduet export RUN... --format inspect|chat|files`: pick the runs, write them in the format, say what was
written and what the format drops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from agents.loop.errors import BadInputError
from agents.replay.export.runs import load_runs

FORMATS = {"inspect": "codeduet-export.eval", "chat": "codeduet-export.jsonl", "files": "codeduet-export"}
"""Each format and where it is written when --output is not given (in the current folder)."""


def export_command(console: Console, targets: list[str], fmt: str, output: Path | None, statuses: list[str],
                   root: Path, warn: Any = None) -> int:
    """Write the runs `targets` name (only those with one of `statuses`, when given) in `fmt`; the exit code."""
    if fmt not in FORMATS:
        raise BadInputError(f"--format {fmt}: not an export format (one of {', '.join(FORMATS)})")
    if fmt == "inspect":
        from agents.loop.extras import require

        require("export", "codeduet export --format inspect")
    out = Path(output) if output is not None else Path(FORMATS[fmt])
    if fmt == "inspect" and out.suffix not in (".eval", ".json"):
        raise BadInputError(f"-o {out}: Inspect reads a log named .eval (or .json, its JSON form)")
    runs = load_runs(targets, root, statuses, warn=warn)
    if fmt == "inspect":
        from agents.replay.export.inspect_log import DROPS, write_inspect

        path = write_inspect(runs, out, source=", ".join(targets))
    elif fmt == "chat":
        from agents.replay.export.chat import DROPS, write_chat

        path = write_chat(runs, out)
    else:
        from agents.replay.export.files import DROPS, write_files

        path = write_files(runs, out)
    solved = sum(1 for t in runs if t.get("status") == "success")
    console.print(f"wrote {path}: {len(runs)} run(s), {solved} successful ({fmt})", soft_wrap=True, highlight=False)
    console.print(f"dropped: {DROPS}", soft_wrap=True, highlight=False)
    return 0
