"""The first message of an attempt: the task, then a preview of the files the scenario put in the workspace.

A small model that never sees the data guesses its format (spaces around `=`, a header row, a date layout) and
then spends its repair turns on the guess; a preview of the first lines of each file removes the guess.
"""

from __future__ import annotations

import re

from agents.feedback.prompts import render
from agents.sandbox.languages import BY_SUFFIX

SOURCE_SUFFIXES = (".py", *BY_SUFFIX)
"""Files that are code: Python's and those of the languages a sandbox can have (agents/sandbox/languages.py)."""
PY_NAME = re.compile(r"\b(?![A-Z]\w*\.js\b)[\w/.-]+\.(?:py|" + "|".join(s[1:] for s in BY_SUFFIX) + r")\b")
"""A source file the task names: `stats.c`, `src/lib.rs`; not a library's name such as Node.js or Vue.js."""

PREVIEW_CHARS = 4000
"""Characters of file preview at most in one first message, all files together."""
MIN_PART = 200
"""A file whose first line does not fit is cut only when this much room is left; else it is named as not shown."""


def file_preview(files: dict[str, str], lines: int, chars: int = PREVIEW_CHARS) -> str:
    """The first `lines` lines of each file, fenced under its path alone on a line (what `# filename:` takes: copied
    there it is the path, no count attached), what was cut said after the fence; '' when there is nothing to show."""
    if lines <= 0 or not files:
        return ""
    parts, left, skipped = [], chars, []
    for name, content in files.items():
        all_lines = content.splitlines()
        full = "\n".join(all_lines[:lines])
        room = full[:max(0, left)]
        shown = full if len(full) <= left else room.rsplit("\n", 1)[0] if "\n" in room else \
            room if len(room) >= MIN_PART else ""  # whole lines; a long first line cut only when room is left
        if not all_lines:
            parts.append(f"{name}\n(an empty file)")
            continue
        if full and not shown:
            skipped.append(name)
            continue
        kept = shown.count("\n") + 1
        fence = "````" if "```" in shown else "```"
        cut = "" if shown == "\n".join(all_lines) else f"\n(the first {kept} of {len(all_lines)} lines shown)" \
            if shown == "\n".join(all_lines[:kept]) else "\n(only its start shown)"
        parts.append(f"{name}\n{fence}\n{shown}\n{fence}{cut}")
        left -= len(shown)
    if skipped:
        parts.append(f"(not shown, to keep this message short: {', '.join(skipped)})")
    return render("files_preview", files="\n\n".join(parts))


def briefed_task(task: str, files: dict[str, str], lines: int) -> str:
    """The task as the model first reads it: the scenario's words, then the file preview (if any)."""
    preview = file_preview(files, lines)
    return f"{task.rstrip()}\n\n{preview}" if preview else task


def works_on_files(task: str, files: dict[str, bytes] | dict[str, str]) -> bool:
    """Whether the task is about source files (its workspace starts with a module, or it names a .py, .c, .go ...
    file): then the model is taught to save files with `# filename:` (agents/feedback/prompts/system_files.md), and
    failing
    checks ask for the whole corrected file."""
    return any(name.endswith(SOURCE_SUFFIXES) for name in files) or PY_NAME.search(task) is not None
