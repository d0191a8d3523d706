"""The first message of an attempt: the task, then a preview of the files the scenario put in the workspace.

A small model that never sees the data guesses its format (spaces around `=`, a header row, a date layout) and
then spends its repair turns on the guess; a preview of the first lines of each file removes the guess.
"""

from __future__ import annotations

import re

from agents.prompts import render

PY_NAME = re.compile(r"\b[\w/.-]+\.py\b")

PREVIEW_CHARS = 4000
"""Characters of file preview at most in one first message, all files together."""


def file_preview(files: dict[str, str], lines: int, chars: int = PREVIEW_CHARS) -> str:
    """The first `lines` lines of each file, fenced, with its line count; '' when there is nothing to show."""
    if lines <= 0 or not files:
        return ""
    parts, left = [], chars
    for name, content in files.items():
        all_lines = content.splitlines()
        shown = "\n".join(all_lines[:lines])
        if len(shown) > left:
            shown = shown[:max(0, left)].rsplit("\n", 1)[0] if left > 0 else ""
        kept = shown.count("\n") + 1 if shown else 0
        fence = "````" if "```" in shown else "```"
        more = f"\n... ({_lines(len(all_lines) - kept)} more)" if kept < len(all_lines) else ""
        head = f"{name} ({_lines(len(all_lines))}):"
        parts.append(f"{head}\n{fence}\n{shown}{more}\n{fence}" if shown else f"{head} (not shown)")
        left -= len(shown)
    return render("files_preview", files="\n\n".join(parts))


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def briefed_task(task: str, files: dict[str, str], lines: int) -> str:
    """The task as the model first reads it: the scenario's words, then the file preview (if any)."""
    preview = file_preview(files, lines)
    return f"{task.rstrip()}\n\n{preview}" if preview else task


def works_on_files(task: str, files: dict[str, bytes] | dict[str, str]) -> bool:
    """Whether the task is about Python files (its workspace starts with a module, or it names a .py file): then the
    model is taught to save files with `# filename:` (agents/prompts/system_files.md)."""
    return any(name.endswith(".py") for name in files) or PY_NAME.search(task) is not None
