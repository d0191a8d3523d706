"""Run folders as tar bytes: packed on the node, extracted by the caller as an untrusted archive."""

from __future__ import annotations

import io
import posixpath
import secrets
import shutil
import tarfile
from pathlib import Path, PurePosixPath

from agents.loop.errors import CodeduetError

MAX_BYTES = 2 * 2**30
"""Largest total size of the files an archive may unpack to."""
MAX_MEMBERS = 100_000
"""Most entries an archive may hold."""


class UnsafeArchive(CodeduetError):
    """An archive that would write outside its run folder, or is too large; nothing of it is extracted."""


def pack_folder(root: Path, rel: str) -> bytes:
    """A gzipped tar of root/rel, names relative to root; links are stored as links, never followed."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        tar.add(str(Path(root) / rel), arcname=rel, recursive=True)
    return buf.getvalue()


def _safe_name(name: str) -> bool:
    """Relative, no `..`, no empty trick: a name that stays where it is put."""
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and "\\" not in name


def _members(tar: tarfile.TarFile, prefix: str, max_bytes: int, max_members: int
             ) -> tuple[list[tarfile.TarInfo], list[str]]:
    """Members under `prefix` renamed relative to it, and the names skipped (links leaving it, special files)."""
    keep, skipped, total = [], [], 0
    for count, member in enumerate(tar, start=1):
        if count > max_members:
            raise UnsafeArchive(f"the archive holds more than {max_members} entries; nothing was extracted")
        name = posixpath.normpath(member.name)
        if not _safe_name(member.name) or not (name == prefix or name.startswith(prefix + "/")):
            raise UnsafeArchive(f"the archive entry {member.name!r} lies outside the run folder {prefix!r}; "
                                "nothing was extracted")
        rel = posixpath.relpath(name, prefix)
        if member.issym() or member.islnk():
            target = member.linkname if member.issym() else posixpath.normpath(member.linkname)
            inside = _safe_name(target) and (member.issym() or target.startswith(prefix + "/"))
            if not inside:  # a link out of the run folder: dropped, the rest is kept
                skipped.append(member.name)
                continue
            if member.islnk():
                member = member.replace(linkname=posixpath.relpath(target, prefix), deep=False)
        elif not (member.isfile() or member.isdir()):
            skipped.append(member.name)
            continue
        total += member.size if member.isfile() else 0
        if total > max_bytes:
            raise UnsafeArchive(f"the archive unpacks to more than {max_bytes} bytes; nothing was extracted")
        if rel != ".":
            keep.append(member.replace(name=rel, deep=False))
    return keep, skipped


def safe_extract(data: bytes, dest: Path, prefix: str, max_bytes: int = MAX_BYTES,
                 max_members: int = MAX_MEMBERS) -> list[str]:
    """Extract the run folder `prefix` (e.g. `primes/<run-id>`) from `data` into dest/prefix; return skipped names.

    Every entry must lie under `prefix` (no absolute name, no `..`); symlinks may only point down inside the run
    folder and hard links only to its own entries (others are skipped); special files are skipped; size and entry
    count are bounded. It unpacks into a hidden folder first and appears at dest/prefix only when complete."""
    if not _safe_name(prefix) or posixpath.normpath(prefix) != prefix:
        raise UnsafeArchive(f"bad run folder name {prefix!r}")
    final = Path(dest) / prefix
    if final.exists():
        raise UnsafeArchive(f"{final} already exists; nothing was extracted")
    staging = Path(dest) / f".incoming-{secrets.token_hex(4)}"
    staging.mkdir(parents=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            members, skipped = _members(tar, prefix, max_bytes, max_members)
            run_dir = staging / "run"
            run_dir.mkdir()
            try:
                tar.extractall(run_dir, members=members, filter="data")
            except tarfile.FilterError as exc:
                raise UnsafeArchive(f"unsafe archive entry: {exc}; nothing was extracted") from None
        final.parent.mkdir(parents=True, exist_ok=True)
        run_dir.rename(final)
        return skipped
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise UnsafeArchive(f"the run folder's archive does not unpack: {exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
