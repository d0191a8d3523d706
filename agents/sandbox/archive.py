"""The workspace lives in the container (no host bind mount): host files go in with put_archive (or, when small,
inside the runner's next request), and after every block what the code wrote comes back with get_archive,
extracted safely into the host's run folder."""

from __future__ import annotations

import base64
import io
import os
import posixpath
import stat
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from agents.loop.errors import disk_full
from agents.sandbox.safe_write import make_dirs, remove_path, write_stream

MOUNT = "/workspace"
MAX_MEMBERS = 20_000
"""Entries one copy-back extracts at most (files and directories)."""
PER_FILE = 16
"""Up to this many changed files are fetched one get_archive each; more, and /workspace comes back whole."""
WHOLE_MAX = 8 << 20
"""Several changed files in a workspace this small come back in one archive of /workspace (one round trip)."""
CHUNK = 1 << 16
INLINE_MAX = 1 << 20
"""Host files up to this size in total travel inside the runner's request instead of a put_archive (~50 ms saved)."""
Signature = tuple[int, int, int]


def human(n: float) -> str:
    """1536 -> '1.5 KiB'."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


@dataclass
class CopyReport:
    """What one copy-back did, and what it refused; `notes()` are lines for the execution's output."""

    bound: int
    label: str
    file_max: int = 1 << 62
    """The largest file copied back; bigger ones stay in the sandbox and are listed (sandbox.copy_back_max)."""
    file_max_label: str = ""
    copied: int = 0
    bytes: int = 0
    """Bytes of file data read from the sandbox (written or skipped); the bound applies to these."""
    removed: int = 0
    too_large: list[str] = field(default_factory=list)
    """Files over file_max, as 'name (size)': left in the sandbox."""
    over_bound: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def left(self) -> int:
        """Bytes this copy-back may still write on the host."""
        return self.bound - self.bytes

    def notes(self) -> list[str]:
        """One line per kind of problem (nothing when all went well)."""
        out = []
        if self.too_large:
            out.append(f"[codeduet: files larger than {self.file_max_label} (sandbox.copy_back_max) stay in the "
                       f"sandbox and are not copied to the run folder: {_names(self.too_large)}]")
        if self.over_bound:
            out.append(f"[codeduet: the workspace copy-back is bounded to {self.label} per block; not copied to the "
                       f"run folder: {_names(self.over_bound)}]")
        if self.refused:
            out.append(f"[codeduet: not copied back (links and special files stay in the sandbox): "
                       f"{_names(self.refused)}]")
        if self.error:
            out.append(f"[codeduet: the workspace could not be copied back: {self.error}]")
        return out


def _names(items: list[str], keep: int = 5) -> str:
    more = len(items) - keep
    return ", ".join(items[:keep]) + (f" and {more} more" if more > 0 else "")


def safe_relpath(name: str) -> str | None:
    """A tar member name as a clean relative path, or None for anything that could leave the folder."""
    if not name or "\x00" in name or name.startswith("/") or len(name) > 4096:
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return None
    return "/".join(parts)


def regular_files(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(relative path, stat) of every regular file below root; links are never followed."""
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(root / rel if rel else root))
        except OSError:
            continue
        for e in entries:
            path = f"{rel}/{e.name}" if rel else e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(path)
            elif stat.S_ISREG(st.st_mode):
                yield path, st


class WorkspaceSync:
    """Keeps the host folder and the container's /workspace in step, one block at a time."""

    def __init__(self, root: Path, owner: tuple[int, int], bound: int, label: str, file_max: int = 1 << 62,
                 file_max_label: str = ""):
        self.root = root
        self.owner = owner
        self.bound = bound
        self.label = label
        self.file_max, self.file_max_label = file_max, file_max_label
        self.synced: dict[str, Signature] = {}
        """Host files the container already holds, by (size, mtime, inode) when last put or copied back."""

    # -- host -> container -----------------------------------------------------------------------
    def _host_files(self) -> Iterator[tuple[str, os.stat_result]]:
        """Regular files of the host folder (links are never followed nor sent)."""
        return regular_files(self.root)

    def changed(self) -> list[tuple[str, os.stat_result]]:
        """Host files written since the last sync (by codeduet: the block, a check file, scenario files)."""
        return [(p, st) for p, st in self._host_files() if self.synced.get(p) != _signature(st)]

    def inline(self, changed: list[tuple[str, os.stat_result]]) -> dict[str, tuple[str, int]] | None:
        """Those files as {path: (base64, mode)} for the runner to write, or None when they are too big for that."""
        if sum(st.st_size for _, st in changed) > INLINE_MAX:
            return None
        out = {}
        for path, st in changed:
            fd = os.open(self.root / path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as fh:
                out[path] = (base64.b64encode(fh.read()).decode(), _mode(st.st_mode))
            self.synced[path] = _signature(st)
        return out

    def put(self, api: Any, container_id: str, changed: list[tuple[str, os.stat_result]] | None = None) -> list[str]:
        """Send host files (by default: those that changed since the last sync) with one put_archive; return their
        paths."""
        changed = self.changed() if changed is None else changed
        if not changed:
            return []
        buf = io.BytesIO()
        uid, gid = self.owner
        dirs: set[str] = set()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path, _ in sorted(changed):
                parent = posixpath.dirname(path)
                while parent and parent not in dirs:  # parents first, owned by the sandbox user
                    dirs.add(parent)
                    parent = posixpath.dirname(parent)
            for d in sorted(dirs):
                tar.addfile(self._info(d, tarfile.DIRTYPE, 0o755, 0, time.time(), uid, gid))
            for path, st in sorted(changed):
                with open(self.root / path, "rb") as fh:
                    info = self._info(path, tarfile.REGTYPE, _mode(st.st_mode), st.st_size, st.st_mtime, uid, gid)
                    tar.addfile(info, fh)
        api.put_archive(container_id, MOUNT, buf.getvalue())
        for path, st in changed:
            self.synced[path] = _signature(st)
        return [p for p, _ in changed]

    @staticmethod
    def _info(name: str, kind: bytes, mode: int, size: int, mtime: float, uid: int, gid: int) -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)
        info.type, info.mode, info.size, info.mtime, info.uid, info.gid = kind, mode, size, mtime, uid, gid
        return info

    # -- container -> host -----------------------------------------------------------------------
    def copy_back(self, api: Any, container_id: str, changes: dict[str, Any] | None) -> CopyReport:
        """Bring back what the block wrote (`changes` from the runner; None: compare everything)."""
        report = self.new_report()
        try:
            self._copy_back(api, container_id, changes, report)
        except Exception as exc:  # the container died, the daemon went away: say so, keep the run going
            if disk_full(exc, self.root):  # the host's disk is full: the run folder cannot keep up, the run ends
                raise
            report.error = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        return report

    def new_report(self) -> CopyReport:
        """An empty report with this sync's bounds."""
        return CopyReport(self.bound, self.label, self.file_max, self.file_max_label)

    def _copy_back(self, api: Any, cid: str, changes: dict[str, Any] | None, report: CopyReport) -> None:
        complete = bool(changes and changes.get("complete"))
        if changes:
            for path in sorted(changes.get("removed") or [], reverse=True):  # deepest first
                rel = safe_relpath(str(path))
                if rel:
                    remove_path(self.root, rel)
                    self.synced.pop(rel, None)
                    report.removed += 1
            report.refused += [f"{p} ({'symlink' if k == 'l' else 'special file'})"
                               for p, k in changes.get("skipped") or []]
        if not complete:
            seen = self._fetch(api, cid, MOUNT, "", None, report)
            if seen is not None:  # the whole archive was read: mirror what the code removed
                for path in sorted(set(self.synced) - seen, reverse=True):
                    remove_path(self.root, path)
                    self.synced.pop(path, None)
                    report.removed += 1
            return
        for path in changes.get("dirs") or []:
            rel = safe_relpath(str(path))
            if rel:
                make_dirs(self.root, rel)
        files = [(safe_relpath(str(p)), int(size)) for p, size in changes.get("files") or []]
        files = [(p, size) for p, size in files if p]
        for rel, size in files:
            if size > self.file_max:
                report.too_large.append(f"{rel} ({human(size)})")
                self._drop_stale(rel)
        files = [(p, size) for p, size in files if size <= self.file_max]
        size = changes.get("size")
        if len(files) > PER_FILE or (len(files) > 1 and isinstance(size, int) and size <= WHOLE_MAX):
            self._fetch(api, cid, MOUNT, "", {p for p, _ in files}, report)
            return
        for rel, size in files:
            if size > report.left:  # known too big before asking (a sparse file can claim any size)
                report.over_bound.append(f"{rel} ({human(size)})")
                continue
            self._fetch(api, cid, f"{MOUNT}/{rel}", posixpath.dirname(rel), {rel}, report)

    def _fetch(self, api: Any, cid: str, path: str, parent: str, only: set[str] | None,
               report: CopyReport) -> set[str] | None:
        """Stream one get_archive into the host folder; return the paths it held, None if cut short."""
        res = api._get(api._url("/containers/{0}/archive", cid), params={"path": path}, stream=True,
                       headers={"Accept-Encoding": "identity"})
        try:
            if res.status_code == 404:  # removed again before we asked (a background process)
                return set()
            api._raise_for_status(res)
            return self._extract(res.raw, parent, only, report, whole=path == MOUNT)
        finally:
            res.close()  # also what stops a tar bomb: the rest of the stream is never read

    def _extract(self, stream: Any, parent: str, only: set[str] | None, report: CopyReport,
                 whole: bool) -> set[str] | None:
        seen: set[str] = set()
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for count, member in enumerate(tar):
                if count >= MAX_MEMBERS:
                    report.over_bound.append(f"entries past the first {MAX_MEMBERS:,}")
                    return None
                name = member.name
                if whole:  # get_archive of /workspace names every entry workspace/...
                    head, _, name = name.partition("/")
                    if head != "workspace" or not name:
                        continue
                rel = safe_relpath(posixpath.join(parent, name) if parent else name)
                if rel is None:
                    report.refused.append(f"{member.name!r} (path leaves the workspace)")
                    continue
                try:
                    tarfile.data_filter(member, str(self.root))  # the stdlib's own rules, on top of ours
                except tarfile.FilterError as exc:
                    report.refused.append(f"{rel} ({type(exc).__name__})")
                    continue
                if member.isdir():
                    seen.add(rel)
                    if only is None:
                        make_dirs(self.root, rel)
                    continue
                if not member.isreg():
                    if only is None or rel in only:
                        kind = "link" if member.issym() or member.islnk() else "special file"
                        report.refused.append(f"{rel} ({kind})")
                    continue
                seen.add(rel)
                if member.size > self.file_max and (only is None or rel in only):
                    report.too_large.append(f"{rel} ({human(member.size)})")
                    self._drop_stale(rel)  # it stays in the sandbox; an older host copy would mislead
                    if member.size > report.left:
                        return None
                    report.bytes += member.size  # read through, not written
                    continue
                if member.size > report.left:  # even skipping it means reading it through: stop here
                    report.over_bound.append(f"{rel} ({human(member.size)})")
                    return None
                if only is not None and rel not in only:
                    report.bytes += member.size  # read through, not written
                    continue
                self._write(tar, member, rel, report)
        return seen

    def _drop_stale(self, rel: str) -> None:
        """Remove the host's copy of a file that is now too large to copy back (it was smaller before)."""
        if rel in self.synced:
            remove_path(self.root, rel)
            self.synced.pop(rel, None)

    def _write(self, tar: tarfile.TarFile, member: tarfile.TarInfo, rel: str, report: CopyReport) -> None:
        source = tar.extractfile(member)
        assert source is not None
        left = member.size

        def chunks() -> Iterator[bytes]:
            nonlocal left
            while left > 0:
                data = source.read(min(CHUNK, left))
                if not data:
                    raise OSError(f"the archive ended inside {rel}")
                left -= len(data)
                yield data

        report.bytes += write_stream(self.root, rel, chunks(), _mode(member.mode))
        report.copied += 1
        self.synced[rel] = _signature(os.lstat(self.root / rel))


def _signature(st: os.stat_result) -> Signature:
    return st.st_size, st.st_mtime_ns, st.st_ino


def _mode(mode: int) -> int:
    """Files keep only their owner's execute bit."""
    return 0o755 if mode & stat.S_IXUSR else 0o644
