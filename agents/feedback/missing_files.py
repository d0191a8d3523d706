"""A program that asked for a file the workspace does not have: the report names the path and lists what is there
(the 1.5B read `data.csv` in 20 executions of a task whose CSV text was in the task itself)."""

from __future__ import annotations

import re
from pathlib import Path

from agents.feedback.prompts import render
from agents.feedback.workspace_view import BLOCK_FILE, project_files

MISSING = (
    re.compile(r"(?:FileNotFoundError|IOError|OSError): \[Errno 2\] No such file or directory: '([^']+)'"),
    re.compile(r"ENOENT: no such file or directory, (?:open|stat|scandir|lstat) '([^']+)'"),
    re.compile(r"open ([^\s:]+): no such file or directory"),  # Go
    re.compile(r"(?:can't open file|cannot open|can't open) '?([^\s':]+)'?[:,]? (?:\[Errno 2\] )?No such file"),
    re.compile(r"^(?:cat|head|tail|wc|sort|grep|cp|sh|bash): (?:can't open )?'?([^\s':]+)'?: No such file",
               re.MULTILINE),
)
"""How Python, Node, Go, a C program's perror and the shell's tools say a file was not there."""
SHOWN = 20
"""Files listed at most."""


def missing_path(output: str) -> str | None:
    """The first path the output says was not found, or None."""
    found = [(m.start(), m.group(1)) for pattern in MISSING for m in [pattern.search(output)] if m]
    return min(found)[1] if found else None


def relative(path: str, workspace: Path) -> str:
    """A path the program named, relative to the workspace where it lies inside it (the sandbox's /workspace, or the
    local executor's folder)."""
    for root in (f"{workspace}/", "/workspace/", "./"):
        path = path.removeprefix(root)
    return path


def missing_file_note(output: str, workspace: Path | None) -> str:
    """The note under a report whose program asked for a missing file: the path, and the files the working directory
    holds (or that it holds none, so the data must come from the task's own text); '' when nothing was missing."""
    path = missing_path(output)
    if path is None or workspace is None:
        return ""
    if "\\n" in path or "\n" in path:  # the data itself was given where a file name goes (pd.read_csv(text))
        return render("data_as_path", start=path.replace("\\n", " ").strip()[:40])
    rel = relative(path, workspace)
    if rel and (workspace / rel).exists():  # it is there now (a later block wrote it): nothing to say
        return ""
    files = sorted(name for name, _ in project_files(workspace))
    listing = "\n".join(f"- {name}" for name in files[:SHOWN]) + (f"\n- ... and {len(files) - SHOWN} more"
                                                                  if len(files) > SHOWN else "")
    return render("missing_file", path=path, listing=listing) if files else render("missing_file_none", path=path)


def unsaved_file_note(details: list[str], ran: str | None, workspace: Path | None) -> str:
    """The note under a report whose failed check needed a file the workspace lacks while the reply's code ran as a
    throwaway script (block01.py): the 1.5B wrote a right Flask app without `# filename: app.py`, and the check's
    `python3 app.py` found nothing to start. '' when that is not what happened."""
    if workspace is None or not ran or not BLOCK_FILE.fullmatch(ran.rpartition("/")[2]):
        return ""
    for detail in details:
        rel = relative(missing_path(detail) or "", workspace)
        if rel and not rel.startswith("/") and not (workspace / rel).exists():
            return render("unsaved_file", path=rel, ran=ran)
    return ""
