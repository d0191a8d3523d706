"""A scenario's `files_from:` folder: read once at load time (caps, no link out), written into every attempt.

Links: one whose target leaves the folder is an error and is never followed; one to a file inside the folder is
copied as a regular file holding its target's content; one to a folder inside is skipped (that folder is copied
under its own name). Broken links, sockets and pipes are skipped.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agents.loop.errors import ScenarioError
from agents.sandbox.archive import human

MAX_FILES = 2000
"""Files a `files_from:` folder may hold (after the skipped folders)."""
MAX_BYTES = 20 * 1024**2
"""Bytes a `files_from:` folder may hold, all files together."""
SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules",
             ".tox"}
"""Folders never copied, wherever they sit in the tree: version control, environments, caches."""


def read_folder(folder: Path, where: str) -> dict[str, bytes]:
    """{posix relative path: content} of the folder's files; ScenarioError `where: problem` (one line) otherwise."""
    if not folder.exists():
        raise ScenarioError(f"{where}: folder {str(folder)!r} not found; the path is relative to the scenario file")
    if not folder.is_dir():
        raise ScenarioError(f"{where}: {str(folder)!r} is not a folder; list single files under files: instead")
    root = folder.resolve()
    files: dict[str, bytes] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in [*dirnames, *sorted(filenames)]:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            real = _inside(root, path, where, rel)
            try:
                st = os.stat(real)
            except OSError:
                continue  # a broken link
            if not stat.S_ISREG(st.st_mode):
                continue  # a folder (walked under its own name), a link to one, a socket or a pipe
            if len(files) >= MAX_FILES:
                raise ScenarioError(f"{where}: the folder holds more than {MAX_FILES:,} files (the cap); point "
                                    f"files_from at a smaller folder or remove generated files")
            total += st.st_size
            if total > MAX_BYTES:
                raise ScenarioError(f"{where}: the folder holds more than {human(MAX_BYTES)} (the cap; {rel} "
                                    f"is {human(st.st_size)}); point files_from at a smaller folder")
            try:
                files[rel] = real.read_bytes()
            except OSError as exc:
                raise ScenarioError(f"{where}: cannot read {rel} ({exc.strerror})") from None
    return files


def _inside(root: Path, path: Path, where: str, rel: str) -> Path:
    """The path to read (a link's target inside the folder); a link leading out of the folder is an error."""
    if not path.is_symlink():
        return path
    target = Path(os.path.realpath(path))
    if target != root and root not in target.parents:
        raise ScenarioError(f"{where}: {rel} is a symbolic link to {os.readlink(path)!r}, outside the folder; "
                            f"copy the file into the folder instead")
    return target


def check_overlap(tree: dict[str, bytes], files: dict[str, str], where: str) -> None:
    """A `files:` entry may replace a folder's file, not stand where it has a folder (or below one of its files)."""
    folders = {p.rsplit("/", i)[0] for p in tree for i in range(1, p.count("/") + 1)}
    for name in files:
        parents = {name.rsplit("/", i)[0] for i in range(1, name.count("/") + 1)}
        if name in folders or parents & set(tree):
            raise ScenarioError(f"{where}: files: entry '{name}' collides with files_from (a file and a folder "
                                f"of the same name); rename one of them")


def write_files(root: Path, files: dict[str, bytes]) -> None:
    """Write the starting files of an attempt into its fresh workspace."""
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(content)


def as_text(content: bytes) -> str | None:
    """The file's text when it is UTF-8 without NUL bytes (what a transcript can hold exactly), else None."""
    if b"\0" in content:
        return None
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return None
