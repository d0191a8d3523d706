"""Host-side writes into a workspace that sandboxed code can change: never through a planted symlink."""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path
from typing import Iterable

_NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW


def _move_aside(name: str, dir_fd: int) -> None:
    """Remove a symlink/file, or rename a directory out of the way (the sandbox may have planted it)."""
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    except (IsADirectoryError, PermissionError):
        os.rename(name, f"{name}.moved-{secrets.token_hex(3)}", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _open_subdir(name: str, dir_fd: int) -> int:
    """An fd of the real directory `name` under dir_fd, created if missing; a symlink there is replaced."""
    for _ in range(10):
        try:
            return os.open(name, _NOFOLLOW_DIR, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            _move_aside(name, dir_fd)
        try:
            os.mkdir(name, 0o755, dir_fd=dir_fd)
        except FileExistsError:
            continue
    raise OSError(errno.EAGAIN, f"could not create the directory {name!r} safely")


def write_new_file(root: Path, relpath: str, text: str, owner: int | None = None) -> Path:
    """Replace root/relpath by a new regular file holding `text`; no path component is followed as a symlink."""
    *dirs, name = Path(relpath).parts
    fd = os.open(root, _NOFOLLOW_DIR)
    try:
        for part in dirs:
            sub = _open_subdir(part, fd)
            os.close(fd)
            fd = sub
        for _ in range(10):
            _move_aside(name, fd)
            try:
                file_fd = os.open(name, _NEW_FILE, 0o644, dir_fd=fd)
                break
            except FileExistsError:
                continue
        else:
            raise OSError(errno.EAGAIN, f"could not create {relpath!r} safely")
        with os.fdopen(file_fd, "w", encoding="utf-8") as fh:
            if owner is not None:
                os.fchown(file_fd, owner, owner)
            fh.write(text)
    finally:
        os.close(fd)
    return Path(root) / relpath


def _walk_to_parent(root: Path, dirs: list[str], create: bool) -> int | None:
    """An fd of root/dirs..., no component followed as a symlink; None when missing and not `create`."""
    fd = os.open(root, _NOFOLLOW_DIR)
    for part in dirs:
        try:
            sub = _open_subdir(part, fd) if create else os.open(part, _NOFOLLOW_DIR, dir_fd=fd)
        except OSError:
            os.close(fd)
            if create:
                raise
            return None
        os.close(fd)
        fd = sub
    return fd


def write_stream(root: Path, relpath: str, chunks: Iterable[bytes], mode: int = 0o644) -> int:
    """Atomically replace root/relpath by a regular file holding `chunks` (a temp file renamed into place);
    no path component is followed as a symlink. Returns the bytes written."""
    *dirs, name = Path(relpath).parts
    fd = _walk_to_parent(root, dirs, create=True)
    assert fd is not None
    tmp = f".{name[:200]}.codeduet-{secrets.token_hex(4)}"
    written = 0
    try:
        file_fd = os.open(tmp, _NEW_FILE, mode, dir_fd=fd)
        try:
            with os.fdopen(file_fd, "wb") as fh:
                for chunk in chunks:
                    fh.write(chunk)
                    written += len(chunk)
            try:
                os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except IsADirectoryError:  # a directory holds the name: move it aside, as write_new_file does
                _move_aside(name, fd)
                os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=fd)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)
    return written


def make_dirs(root: Path, relpath: str) -> None:
    """Create root/relpath as real directories (a symlink on the way is replaced, never followed)."""
    fd = _walk_to_parent(root, list(Path(relpath).parts), create=True)
    if fd is not None:
        os.close(fd)


def remove_path(root: Path, relpath: str) -> None:
    """Remove the file, link or empty directory root/relpath, never following a symlink on the way."""
    *dirs, name = Path(relpath).parts
    fd = _walk_to_parent(root, dirs, create=False)
    if fd is None:
        return
    try:
        try:
            os.unlink(name, dir_fd=fd)
        except IsADirectoryError:
            os.rmdir(name, dir_fd=fd)
        except PermissionError:  # Linux answers EPERM to unlink() of a directory
            os.rmdir(name, dir_fd=fd)
    except OSError:
        pass  # already gone, or a directory the host still holds files in
    finally:
        os.close(fd)
