"""A watchdog process that removes a sandbox container once the Python process holding it is gone, even by kill -9.

The owner keeps the write end of a pipe; the watchdog blocks reading the other end. A byte means "stopped
cleanly, nothing to do"; end-of-file without a byte means every copy of the write end was closed by the kernel,
i.e. the owner died: the watchdog then removes the containers carrying the label (and the owner's temporary
folder, if given) and exits.
"""

from __future__ import annotations

import os
import subprocess
import sys

WATCHDOG = r'''
import os, shutil, sys
fd, label, folder = int(sys.argv[1]), sys.argv[2], sys.argv[3]
if os.read(fd, 1) == b"":
    import docker
    client = docker.from_env()
    for container in client.containers.list(all=True, filters={"label": label}, ignore_removed=True):
        try:
            container.remove(force=True)
        except Exception:
            pass
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
'''


class Reaper:
    """Starts the watchdog for one label (`key=value`) and an optional temporary folder; `disarm()` when the
    owner cleaned up itself."""

    def __init__(self, label: str, folder: str | None = None):
        read_end, self._write_end = os.pipe()
        try:
            # a session of its own: a Ctrl-C sent to the terminal's process group does not reach it
            self.proc: subprocess.Popen | None = subprocess.Popen(
                [sys.executable, "-c", WATCHDOG, str(read_end), label, folder or ""], pass_fds=(read_end,),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)
        finally:
            os.close(read_end)

    def disarm(self) -> None:
        """The owner cleaned up itself: tell the watchdog to exit without doing anything."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            os.write(self._write_end, b"x")
        except OSError:
            pass
        os.close(self._write_end)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
