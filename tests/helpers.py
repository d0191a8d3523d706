"""Helpers shared by the test modules: run.py as a subprocess, waiting on a condition, leftover containers, replies."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from tests.cli_fork import forkable, run_forked

ROOT = Path(__file__).resolve().parent.parent
RUN_PY = ROOT / "run.py"
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300, cwd: Path | None = None,
            stdin: str | None = None, inherit: bool = True) -> subprocess.CompletedProcess:
    """`python run.py <args>` as a real process (stdin closed unless given), wide enough that lines are not
    wrapped; no terminal, so the output is plain text. Forked from a warm interpreter (tests/cli_fork.py).
    `inherit=False`: `env` is the whole environment, not additions to this process's."""
    full_env = {**(os.environ if inherit else {}), "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb", **(env or {})}
    argv = [sys.executable, str(RUN_PY), *args]
    if forkable(full_env):
        return run_forked(argv, full_env, cwd or ROOT, stdin, timeout)
    return subprocess.run(argv, capture_output=True, text=True, input=stdin,
                          stdin=None if stdin is not None else subprocess.DEVNULL, env=full_env, timeout=timeout,
                          cwd=cwd or ROOT)


def wait_for(what: Callable[[], object], timeout: float = 120, proc: subprocess.Popen | None = None,
             interval: float = 0.05) -> object:
    """Poll until `what()` is truthy and return it; fail if `proc` (a run in another process) ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"run ended early ({proc.returncode}): {proc.communicate()}")
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {getattr(what, '__name__', what)}")


def containers_under(root: Path) -> list[str]:
    """Names of the codeduet containers whose workspace lies under root (the leak guard's own lookup; imported
    when called, so that pytest loads the guard as a plugin first)."""
    from tests.plugins.leak_guard import containers_under as lookup

    return lookup(root)


def plain(text: str) -> str:
    """Terminal output without colour codes."""
    return ANSI.sub("", text)


def py(code: str) -> str:
    """A reply holding one python block."""
    return f"Here is the script:\n```python\n{code}\n```"


def sandbox_runs(root: Path, needle: str) -> bool:
    """Whether a process whose command line holds `needle` runs in a codeduet container whose workspace is under
    root (a block has started, not just been sent)."""
    import docker

    client = docker.from_env()
    for name in containers_under(root):
        try:
            processes = client.containers.get(name).top().get("Processes") or []
        except docker.errors.APIError:
            continue
        if any(needle in " ".join(map(str, p)) for p in processes):
            return True
    return False


def watchdog_pids(run_id: str) -> list[int]:
    """PIDs of the reaper processes watching a run's container (agents/sandbox/reaper.py), from /proc."""
    needle = f"org.codeduet.run={run_id}".encode()
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if needle in Path(f"/proc/{entry}/cmdline").read_bytes():
                    pids.append(int(entry))
            except OSError:
                continue
    return pids


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def toolchains_image() -> str:
    """The image every language and web test runs in: every toolchain and the web preset (`make image-languages`
    builds it; a scenario with fewer languages or packages runs in it too), built here when it is missing."""
    from agents.sandbox.config import SandboxConfig
    from agents.sandbox.image import build_image, image_status

    cfg = SandboxConfig(languages=["c", "cpp", "go", "javascript", "rust"], preset="web")
    if not image_status(cfg.image).get("exists"):
        build_image(cfg.image, languages=cfg.languages, debian=cfg.debian_packages)
    return cfg.image


@contextmanager
def host_listener() -> Iterator[tuple[int, list]]:
    """A TCP listener on every host interface (so any route out of a container would reach it), accepting in a
    thread while the block runs: (its port, the connections it accepted)."""
    import threading

    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", 0))
    server.listen(8)
    server.settimeout(0.2)
    accepted: list = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept()[1])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join()
        server.close()
