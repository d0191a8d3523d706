"""What the model is shown of the workspace: the files a block created, changed or deleted, and the current text of
the files its reply wrote, under a budget. Also the one walk over a workspace's own files and the one file digest,
which agents/record/changes.py uses too (changes.diff of the kept attempt)."""

from __future__ import annotations

import ast
import hashlib
import itertools
import os
import re
from pathlib import Path
from typing import Any, Iterator

from agents.sandbox.archive import human, regular_files
from agents.sandbox.filenames import CHECKS_DIR
from agents.sandbox.kernel import KERNEL_DIR
from agents.sandbox.languages import BLOCKS_DIR, BY_SUFFIX

HIDDEN_DIRS = {CHECKS_DIR, BLOCKS_DIR, KERNEL_DIR, "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
"""Folders whose files the model is not told about (the checks, and caches the interpreter or pytest write)."""
BLOCK_FILE = re.compile(r"block\d+\.(py|sh|c|cpp|rs|js)")
"""The throwaway scripts a block without `# filename:` runs as (at the workspace root)."""
MAX_ENTRIES = 5000
HASH_MAX = 1 << 20
"""Files up to this size are compared by content; larger ones by size and modification time."""
Signature = tuple[int, str]


def last_block(history: list[dict[str, Any]]) -> int:
    """The highest blockNN number an earlier conversation (a resumed run's history) ran, so the new blocks go on
    from it instead of reusing its names."""
    numbers = [int(m.group(1)) for item in history for e in ((item.get("outcome") or {}).get("executions") or [])
               if (m := re.fullmatch(r"block(\d+)\.(?:py|sh)", str(e.get("filename") or "")))]
    return max(numbers, default=0)


def hidden(rel: str) -> bool:
    """Whether a workspace path is codeduet's (checks folder, caches, throwaway block scripts), not the project's."""
    parts = rel.split("/")
    return bool(HIDDEN_DIRS & set(parts)) or (len(parts) == 1 and BLOCK_FILE.fullmatch(rel) is not None)


def project_files(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(posix relative path, stat) of the workspace's regular files that are the project's (links not followed,
    codeduet's own left out: `hidden`)."""
    return ((rel, st) for rel, st in regular_files(root) if not hidden(rel))


def content_digest(data: bytes) -> str:
    """The digest of a file's content (as `digest` computes it from the file)."""
    return hashlib.sha256(data).hexdigest()


def digest(path: Path) -> str:
    """The digest of a regular file's content, read in chunks and never through a link (OSError if unreadable)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    h = hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def snapshot(root: Path) -> dict[str, Signature]:
    """{relative path: (size, content digest)} of the project's files in the workspace (`project_files`); a file
    over HASH_MAX by its modification time instead, so a block's report stays quick."""
    return {path: (st.st_size, _signature(root / path, st))
            for path, st in itertools.islice(project_files(root), MAX_ENTRIES)}


def _signature(path: Path, st: os.stat_result) -> str:
    if st.st_size > HASH_MAX:
        return f"mtime:{st.st_mtime_ns}"
    try:
        return digest(path)
    except OSError:
        return "unreadable"


def changes(before: dict[str, Signature], after: dict[str, Signature]) -> list[dict[str, Any]]:
    """[{path, change: created|changed|deleted, size}] from one snapshot to the next, sorted by path."""
    out = []
    for path in sorted(set(before) | set(after)):
        if path not in before:
            out.append({"path": path, "change": "created", "size": after[path][0]})
        elif path not in after:
            out.append({"path": path, "change": "deleted", "size": 0})
        elif before[path] != after[path]:
            out.append({"path": path, "change": "changed", "size": after[path][0]})
    return out


def files_changed_text(files: list[dict[str, Any]], keep: int = 15) -> str:
    """One line per file a reply created, changed or deleted ('' when none)."""
    lines = [f"- {f['change']}" + ("" if f["change"] == "deleted" else f" ({human(f['size'])})") + f": {f['path']}"
             for f in files[:keep]]  # the path ends the line: copied after `# filename:`, it is just the path
    if len(files) > keep:
        lines.append(f"- ... and {len(files) - keep} more")
    return "\n".join(lines)


def current_text(root: Path, paths: list[str], lines_each: int = 40, budget_chars: int = 4800) -> str:
    """The current text of `paths` in the workspace, each cut to `lines_each` lines, all under `budget_chars`
    (about 1,200 tokens); what is cut is said. '' when there is nothing to show."""
    parts, left, skipped = [], budget_chars, []
    for path in paths:
        text = _read_text(root / path)
        if text is None:
            continue
        all_lines = text.splitlines()
        shown = all_lines[:lines_each]
        body = "\n".join(shown)
        if len(body) > left:
            if left < 200:
                skipped.append(path)
                continue
            body = body[:left].rsplit("\n", 1)[0]
            shown = body.splitlines()
        note = f"\n(the first {len(shown)} of {len(all_lines)} lines shown)" if len(shown) < len(all_lines) else ""
        fence = "````" if "```" in body else "```"
        parts.append(f"{path}\n{fence}\n{body}\n{fence}{note}")  # the path alone: what `# filename:` takes
        left -= len(body)
    if skipped:
        parts.append(f"(not shown, to keep this message short: {', '.join(skipped)})")
    return "\n\n".join(parts)


def _read_text(path: Path) -> str | None:
    """A regular file's text (never through a link), or None for a missing, binary or unreadable one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(256 * 1024)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


FRAME = re.compile(rf"^(?P<head> {{4}}(?P<file>[\w.][\w./-]*\.(?:{'|'.join(s[1:] for s in BY_SUFFIX)})):"
                   r"(?P<line>\d+)(?::\d+)? in \S[^\n]*?)$", re.MULTILINE)
"""A stack frame in the user's file as agents/feedback/compiler_output.py shortens a sanitizer report or a Go or Rust
panic:
`    stats.c:19 in read_numbers`."""


def quote_frames(text: str, root: Path, width: int = 100) -> str:
    """Each stack frame in a file of the workspace followed by the source line it names (`stats.c:19 in read_numbers:
    items[n++] = value;`): a compiler's error shows its line, a sanitizer's or a panic's frames give only numbers,
    which a small model does not count its way to."""
    cache: dict[str, list[str] | None] = {}

    def source(m: re.Match[str]) -> str:
        rel = m["file"]
        if rel not in cache:
            path = root / rel
            text = _read_text(path) if ".." not in Path(rel).parts and path.is_file() else None
            cache[rel] = text.splitlines() if text is not None else None
        lines, number = cache[rel], int(m["line"])
        if not lines or not 0 < number <= len(lines) or not lines[number - 1].strip():
            return m[0]
        return f"{m['head']}: {lines[number - 1].strip()[:width]}"

    return FRAME.sub(source, text)


def top_level_names(code: str) -> set[str]:
    """Names of the functions and classes a Python text defines at module level (none when it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def redefined_modules(root: Path, scripts: list[str], skip: set[str], keep: int = 3) -> list[tuple[str, list[str]]]:
    """Workspace modules whose functions or classes a throwaway script defined again: (path, names). The script
    ran as blockNN.py, so the module (which the checks import) did not change."""
    names = set().union(*(top_level_names(code) for code in scripts)) if scripts else set()
    if not names:
        return []
    out = []
    for path, st in sorted(regular_files(root))[:MAX_ENTRIES]:
        if not path.endswith(".py") or hidden(path) or path in skip or st.st_size > 256 * 1024:
            continue
        common = sorted(names & top_level_names(_read_text(root / path) or ""))
        if common:
            out.append((path, common))
    return out[:keep]
