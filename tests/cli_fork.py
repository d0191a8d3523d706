"""`python run.py ARGS` as a real process forked from a warm interpreter: the tests' way to run the CLI quickly.

A fresh interpreter spends about 2.4 s of CPU importing AG2 (autogen imports openai's types through its LLM config)
before codeduet's own code starts: on two cores, the ~200 CLI runs of the test suite paid minutes for it. Here one
helper process per test worker imports AG2 and the other heavy third-party packages once, and every call forks it:
the CLI still runs in a process of its own (its own pid, argv, environment, working directory, stdin, stdout and
stderr; its exit code or the signal that killed it; atexit handlers at exit), it only skips re-reading the same
modules from disk. codeduet's own modules are not preloaded, so every call imports them anew, as a new process
would, and reads its environment (COLUMNS, NO_COLOR, ...) for itself.

What a forked interpreter cannot take from its environment (PYTHON* variables read at interpreter start) makes the
call a plain subprocess instead; so does CODEDUET_TEST_NO_FORK=1, for a suspicion that the fork matters.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

PRELOAD = ("autogen", "openai", "docker", "pydantic", "yaml", "jinja2")
"""Third-party packages with no state read from the environment at import: imported once, shared by every fork."""

SERVER = r'''
import atexit, gc, importlib, json, os, runpy, select, signal, socket, sys, threading, traceback
for name in sys.argv[2].split(","):
    importlib.import_module(name)
assert threading.active_count() == 1, "a preloaded module started a thread: forking it is unsafe"
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(16)
gc.freeze()  # the preloaded objects are never traversed by a fork's collections (no copy-on-write for that)
print("ready", flush=True)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the waiters below are reaped by the kernel
while True:
    ready, _, _ = select.select([listener, sys.stdin], [], [])
    if sys.stdin in ready:  # the test process that started it is gone (its end of the pipe closed)
        break
    conn, _ = listener.accept()
    if os.fork():  # the server goes back to accepting; a waiter per call
        conn.close()
        continue
    listener.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    request, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    request = json.loads(request)
    pid = os.fork()
    if pid:  # the waiter: tell the pid, wait, tell the status
        for fd in fds:
            os.close(fd)
        conn.sendall(f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        try:
            conn.sendall(f"{status}\n".encode())
        except OSError:  # the caller stopped waiting (its timeout killed the process)
            pass
        os._exit(0)
    # the CLI process
    conn.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.setpgid(0, 0)  # its own group, as the test's timeout kills it with its children
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = request["argv"]
    sys.path[0] = os.path.dirname(request["argv"][0])
    code = 0
    try:
        runpy.run_path(request["argv"][0], run_name="__main__")
    except SystemExit as exit:
        code = exit.code
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    # what the interpreter's exit does first (wait for non-daemon threads, atexit), then no teardown of the
    # inherited modules: freeing them would copy every page shared with the server (2 s per call, measured)
    threading._shutdown()
    atexit._run_exitfuncs()
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
'''

_lock = threading.Lock()
_server: tuple[subprocess.Popen, str] | None = None


def _address() -> str:
    """The socket of this process's warm interpreter, started on first use."""
    global _server
    with _lock:
        if _server is None or _server[0].poll() is not None:
            path = os.path.join(tempfile.mkdtemp(prefix="codeduet-fork-"), "cli.sock")
            # its stdin is a pipe from this process: when this process ends, however it ends, the server does too
            proc = subprocess.Popen([sys.executable, "-c", SERVER, path, ",".join(PRELOAD)], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True)
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the warm interpreter for CLI runs did not start (exit {proc.wait()})")
            atexit.register(proc.kill)
            _server = (proc, path)
        return _server[1]


def forkable(env: dict[str, str]) -> bool:
    """Whether a fork gives the same process as a fresh interpreter with this environment."""
    if env.get("CODEDUET_TEST_NO_FORK") == "1":
        return False
    starts = {k: v for k, v in env.items() if k.startswith("PYTHON")}
    return starts == {k: v for k, v in os.environ.items() if k.startswith("PYTHON")}


def run_forked(argv: list[str], env: dict[str, str], cwd: Path, stdin: str | None,
               timeout: float) -> subprocess.CompletedProcess:
    """subprocess.run(argv, capture_output=True, text=True, ...) for `python run.py ...`, forked warm."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            (tempfile.TemporaryFile() if stdin is not None else open(os.devnull, "rb")) as inp:
        if stdin is not None:
            inp.write(stdin.encode())
            inp.seek(0)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(_address())
            request = {"argv": [str(a) for a in argv[1:]], "env": env, "cwd": str(cwd)}
            socket.send_fds(conn, [json.dumps(request).encode()], [inp.fileno(), out.fileno(), err.fileno()])
            replies = conn.makefile("r")
            pid = int(replies.readline())
            conn.settimeout(max(timeout, 0.001))
            try:
                status = replies.readline()
            except TimeoutError:
                _kill_group(pid)
                raise subprocess.TimeoutExpired(argv, timeout, _read(out), _read(err)) from None
        if not status:
            raise RuntimeError(f"the warm interpreter's waiter for {argv[2:]} ended without the exit status")
        return subprocess.CompletedProcess(argv, os.waitstatus_to_exitcode(int(status)), _read(out), _read(err))


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _read(file) -> str:
    """What the process wrote, as subprocess's text mode gives it (universal newlines)."""
    file.seek(0)
    return file.read().decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
