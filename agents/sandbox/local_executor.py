"""The opt-in local executor: a subprocess on this machine, no isolation. Prints a warning each run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from agents.loop.budget import clamp
from agents.loop.protocols import ExecResult
from agents.sandbox.config import SandboxConfig
from agents.sandbox.filenames import command_for, not_in_sandbox, place_block, ran_as
from agents.sandbox.incontainer.listening import ServerWatch
from agents.sandbox.languages import block_name
from agents.sandbox.output import BoundedOutput
from agents.sandbox.servers import served, server_line

WARNING = "sandbox kind 'local' runs LLM-written code on this machine with your permissions: no isolation"
SAFE_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")


class LocalExecutor:
    """Runs blocks with this interpreter in the workspace folder, with the timeout and output limit."""

    def __init__(self, cfg: SandboxConfig, workspace: Path, run_id: str | None = None):
        self.cfg = cfg
        self.deadline: float | None = None
        """When set (a time.monotonic() instant: a run's time budget), no block or command runs past it."""
        self.workspace = Path(workspace).resolve()
        self.counter = 0
        self._block = False
        """The command running is a block, watched for a server (incontainer/listening.py), not a check."""

    def start(self) -> None:
        """Create the workspace folder."""
        self.workspace.mkdir(parents=True, exist_ok=True)

    def stop(self) -> None:
        """Nothing to remove."""

    def describe(self) -> dict[str, Any]:
        """Kind and limits (only timeout and output_limit apply locally)."""
        return {"kind": "local", "python": sys.executable, "timeout": self.cfg.timeout,
                "output_limit": self.cfg.output_limit, "warning": WARNING}

    def execute(self, code: str, language: str = "python", run: bool = True) -> ExecResult:
        """Write the block and run it; a `# filename: path` block is saved there and run only when it is a .py."""
        self.start()
        missing = not_in_sandbox(code, language, self.cfg.languages)
        if missing is not None:
            return missing
        placed = place_block(self.workspace, code, language, self.cfg.disk_bytes, self.cfg.disk, self._next_name,
                             languages=self.cfg.languages if run else ())
        if isinstance(placed, ExecResult):  # a file only saved, or refused
            return placed
        filename, language, note = placed
        argv, how = command_for(sys.executable, language, self.workspace, filename, self.cfg.error_locals,
                                self.cfg.sanitize)
        self._block = True
        try:
            return ran_as(self.run_command(argv), filename, language, note, how)
        finally:
            self._block = False

    def session_files(self) -> list[str] | None:
        """None: every block runs in a fresh process."""
        return None

    def restore(self, files: list[str]) -> None:
        """Nothing: no state lives on between blocks here."""

    def _next_name(self, language: str) -> str:
        """The next throwaway file name: block01.py, block02.sh, ..."""
        self.counter += 1
        return block_name(language, self.counter)

    def run_command(self, argv: list[str], timeout: float | None = None) -> ExecResult:
        """Run in its own process group, killed as a group at the timeout; the host env is not passed."""
        self.start()
        limit = clamp(timeout or self.cfg.timeout, self.deadline)
        env = {k: os.environ[k] for k in SAFE_ENV if k in os.environ}
        env.update(HOME=str(self.workspace), PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1",
                   PYTHONPATH=str(self.workspace))  # the project's root importable from any file, as in Docker
        if argv and argv[0] == "python3":
            argv = [sys.executable, *argv[1:]]
        started = time.perf_counter()
        watch = ServerWatch(self.cfg.server_seconds, time.monotonic()) if self._block else None
        proc = subprocess.Popen(argv, cwd=self.workspace, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
        out = BoundedOutput(self.cfg.output_limit)
        guard = Guard(proc, limit, watch)
        try:
            for chunk in iter(lambda: proc.stdout.read1(65536), b""):
                if watch:
                    watch.output(time.monotonic())
                out.write(chunk.decode("utf-8", errors="replace"))
            proc.wait()
            left = watch.ended(time.monotonic()) if watch and not guard.server and not guard.late else None
        finally:
            guard.done.set()
            _kill_group(proc)
        duration = time.perf_counter() - started
        timed_out = duration >= limit and proc.returncode in (-signal.SIGKILL, -signal.SIGTERM)
        seen = guard.server or left or (watch.server if watch and guard.late else None)
        server = served(seen, timed_out, duration)
        timed_out = timed_out and server is None  # a server stopped at the limit is a server, not a time-out
        text = out.text() + (f"\n[codeduet: {server_line(server)}; the process group was stopped]" if server else
                             f"\n[codeduet: timed out after {limit:g} s; the process group was killed]"
                             if timed_out else "")
        code = 124 if timed_out else (128 - proc.returncode if proc.returncode < 0 else proc.returncode)
        return ExecResult(exit_code=code, output=text, duration_s=round(duration, 4),
                          timed_out=timed_out, truncated=out.truncated, server=server)


class Guard:
    """Stops a command's process group at its time limit, or, for a block that started a server (`watch`), once
    the server has listened quietly for its grace (TERM, then KILL a second later)."""

    def __init__(self, proc: subprocess.Popen, limit: float, watch: ServerWatch | None):
        self.proc, self.limit, self.watch = proc, limit, watch
        self.server: dict[str, Any] | None = None
        """The server it stopped (None: none)."""
        self.late = False
        """It stopped the command at its time limit."""
        self.done = threading.Event()
        if watch is not None:
            watch.sid = proc.pid
        threading.Thread(target=self._guard, daemon=True).start()

    def _guard(self) -> None:
        started = time.monotonic()
        while not self.done.wait(0.1):
            now = time.monotonic()
            if now - started >= self.limit:
                self.late = True
                _kill_group(self.proc)
                return
            if self.watch is not None and self.watch.poll(now):
                self.server = self.watch.stopped(now)
                _kill_group(self.proc, signal.SIGTERM)
                if not self.done.wait(1):
                    _kill_group(self.proc)
                return


def _kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
