"""What a run changed, like a pull request: the kept attempt's workspace against the files it started with.

`changes.diff` in the run folder is a git-style unified diff (`git apply` takes it); it is not written when the run
changed nothing. Binary files, undecodable ones and files over DIFF_MAX are listed by name and size, not diffed.
codeduet's own files (block scripts, the checks folder, caches: agents/feedback/workspace_view.py `hidden`) are left
out.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.feedback.workspace_view import content_digest, digest, hidden, project_files
from agents.record.run_folder import DIFF_FILE, write_atomic
from agents.sandbox.archive import human
from agents.scenario.project_files import as_text

DIFF_MAX = 1024**2
"""Files larger than this (before or after) are listed by size instead of diffed, and compared by digest."""
SHOW_LINES = 400
"""Diff lines `replay` and the HTML page show at most; the whole diff stays in changes.diff."""


@dataclass(frozen=True)
class Large:
    """A workspace file over DIFF_MAX, not held in memory: its size and digest."""

    size: int
    digest: str


Content = bytes | Large


def workspace_files(root: Path) -> dict[str, Content]:
    """{posix relative path: content} of the workspace's regular files (links not followed, codeduet's left out)."""
    out: dict[str, Content] = {}
    for rel, st in project_files(root):
        path = root / rel
        try:
            out[rel] = path.read_bytes() if st.st_size <= DIFF_MAX else Large(st.st_size, digest(path))
        except OSError:
            continue
    return out


def _size(content: Content) -> int:
    return content.size if isinstance(content, Large) else len(content)


def _same(old: Content | None, new: Content | None) -> bool:
    """Whether a file is unchanged (a large file by size and digest)."""
    if isinstance(old, bytes) and isinstance(new, Large):
        return len(old) == new.size and content_digest(old) == new.digest
    return old == new


def diff_trees(before: dict[str, Content], after: dict[str, Content]) -> tuple[str, list[dict[str, Any]]]:
    """The unified diff of two trees and the changed files [{path, change, added, removed, size}], by path; size
    is the file's bytes after the run (before it, for a deleted file), added/removed None for a file not diffed."""
    parts, changed = [], []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if hidden(path) or _same(old, new):
            continue
        change = "created" if old is None else "deleted" if new is None else "modified"
        text, added, removed = _file_diff(path, change, old, new)
        parts.append(text)
        size = _size(new if new is not None else old)
        changed.append({"path": path, "change": change, "added": added, "removed": removed, "size": size})
    return "".join(parts), changed


def _file_diff(path: str, change: str, old: Content | None, new: Content | None) -> tuple[str, int | None, int | None]:
    """One file's part of the diff, with its added and removed line counts (None for a file listed by size)."""
    a, b = _lines(old), _lines(new)
    if a is None or b is None:  # a bare line (no `diff --git` header): `git apply` skips it, applies the rest
        return f"Binary file {path} {change} ({human(_size(new if new is not None else old))})\n", None, None
    head = f"diff --git a/{path} b/{path}\n" + {"created": "new file mode 100644\n",
                                                   "deleted": "deleted file mode 100644\n"}.get(change, "")
    body = difflib.unified_diff(a, b, "/dev/null" if old is None else f"a/{path}",
                                "/dev/null" if new is None else f"b/{path}")
    lines = [line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n" for line in body]
    added = sum(1 for line in lines[2:] if line.startswith("+"))
    removed = sum(1 for line in lines[2:] if line.startswith("-"))
    return head + "".join(lines), added, removed


def _lines(content: Content | None) -> list[str] | None:
    """A file's lines (with their ends) when it can be diffed as text; [] for an absent file; None otherwise."""
    if content is None:
        return []
    text = as_text(content) if isinstance(content, bytes) and len(content) <= DIFF_MAX else None
    if text is None:
        return None
    parts = text.split("\n")  # only \n ends a line, as for git (str.splitlines also splits on \r, \f, ...)
    return [f"{part}\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def record_changes(run_dir: Path, workspace: Path, starting: dict[str, bytes]) -> list[dict[str, Any]]:
    """Write <run_dir>/changes.diff (only when something changed) and return the changed files ([] when the
    workspace was never made, or cannot be read: the transcript is written after this, whatever happens)."""
    if not workspace.is_dir():
        return []
    try:
        text, changed = diff_trees(starting, workspace_files(workspace))
        if text:
            write_atomic(run_dir / DIFF_FILE, text)
    except OSError:
        return []
    return changed


def line_kinds(lines: list[str]) -> list[str]:
    """How each diff line is coloured: head (a file's header), hunk, add, del, note (binary, no newline) or ''.
    Header lines are only those between `diff --git` and the first `@@`, so a removed `-- x` is not one."""
    kinds, header = [], False
    for line in lines:
        if line.startswith("diff --git "):
            header = True
        elif line.startswith(("@@", "Binary file ")):
            header = False
        first = line[:1]
        kinds.append("head" if header else "hunk" if line.startswith("@@") else
                     {"+": "add", "-": "del", "\\": "note", "B": "note"}.get(first, ""))
    return kinds


def shown_diff(t: dict[str, Any], limit: int = SHOW_LINES) -> tuple[list[dict[str, Any]], list[str], int]:
    """A saved run's changed files, the first `limit` lines of its changes.diff and how many lines were left out."""
    changed = t.get("changed_files") or []
    try:
        lines = (Path(str(t.get("run_dir"))) / DIFF_FILE).read_text(encoding="utf-8").split("\n")[:-1]
    except (OSError, UnicodeDecodeError):
        lines = []
    return changed, lines[:limit], max(0, len(lines) - limit)


def changes_title(changed: list[dict[str, Any]]) -> str:
    """'changes (3 files)'."""
    return f"changes ({len(changed)} file{'' if len(changed) == 1 else 's'})"
