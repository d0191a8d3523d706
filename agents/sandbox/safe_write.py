"""Host-side writes into a workspace that sandboxed code can change: never through a planted symlink."""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

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
