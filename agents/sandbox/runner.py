"""The warm runner: PID 1 of the sandbox container runs each block on request, fed over the container's attached
stdin, so a block costs one fork+exec inside the container instead of a `docker exec` round trip.

Wire format, over the attach stream (the bytes docker carries for the container's stdin and stdout):
- host -> runner: one JSON line per block, {"argv": [...], "deadline": seconds, "put": [paths], "files": {path:
  base64}, "spare": path} (`spare`: a file of pids that killing a block's stragglers leaves alive, the Python
  kernel's in a kernel session; `files`: small host files, such as the block itself, that the runner writes into
  /workspace before running argv, which saves a put_archive round trip; `put`: files the host has just sent with
  put_archive; neither counts as written by the code; `server`: for a block, the seconds a server it starts may stay
  listening and quiet before it is stopped);
- runner -> host: frames `tag (1 byte) + length (4 bytes, big endian) + payload`; tag O is output,
  tag X ends the block with a JSON payload {"exit_code": N, "changes": {...}}: what changed in /workspace since
  the previous block (files with their sizes, new directories, removed paths, links and special files that will
  not be copied back, whether the listing was cut, and the workspace's free and total bytes), and `server`: the
  port a block listened on, after how long, and when it was stopped (agents/sandbox/incontainer/listening.py).

The runner is no more trusted than the block it runs (same user, same container): the host bounds every frame,
treats a broken stream as a broken runner, and falls back to `docker exec`.
"""

from __future__ import annotations

import functools
import json
import socket
import struct
import time
from pathlib import Path
from typing import Any, Callable

from agents.sandbox import incontainer
from agents.sandbox.lost import lost_state

RUNNER = r'''
import base64, ctypes, json, os, select, signal, stat, struct, subprocess, sys, time
try:
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: blocks cannot ptrace or open PID 1's pipes
except Exception:
    pass
out = sys.stdout.buffer
def frame(tag, data):
    out.write(tag + struct.pack(">I", len(data)) + data)
    out.flush()
def reap():
    """Reap every finished child (PID 1 adopts orphans); return {pid: exit status}."""
    done = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done[pid] = os.waitstatus_to_exitcode(status)
def kill_all(spare_file=None):
    """SIGKILL every process but PID 1; and, when spare_file names them (a kernel session), but those."""
    spare = set()
    if spare_file:  # written by the kernel, as the sandbox user: a regular file, read without blocking, two pids
        try:
            fd = os.open(spare_file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
            try:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    spare = {int(p) for p in os.read(fd, 64).split()[:2]}
            finally:
                os.close(fd)
        except (OSError, ValueError):
            spare = set()
    if not spare:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:  # nothing left to kill
            pass
        return
    spare.add(1)
    for _ in range(3):
        for p in os.listdir("/proc"):
            if p.isdigit() and int(p) not in spare:
                try:
                    os.kill(int(p), signal.SIGKILL)
                except OSError:
                    pass
def run(argv, deadline, spare=None, grace=None):
    """Run argv to its end; (exit code, the server it started or None). With `grace`: a block that listens on a new
    port and then prints nothing for `grace` s is a server, stopped (TERM to its group, then every process but the
    spared); so is whatever it leaves listening when it ends."""
    r, w = os.pipe()
    try:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=w, stderr=w, start_new_session=True,
                                 cwd="/workspace")
    except OSError as exc:
        os.close(r); os.close(w)
        frame(b"O", f"codeduet runner: {exc}\n".encode())
        return 127, None
    os.close(w)
    started, code, exited_at, eof = time.monotonic(), None, None, False
    watch = ServerWatch(grace, started)  # every command: what it leaves listening goes; a block: its server, too
    server, term_at = None, None
    while not eof or code is None:
        ready = select.select([r], [], [], 0.05)[0] if not eof else []
        if ready:
            data = os.read(r, 65536)
            if data:
                frame(b"O", data)
                watch.output(time.monotonic())
            else:
                eof = True
        elif eof:
            time.sleep(0.02)
        status = reap()
        if code is None and child.pid in status:
            code, exited_at = status[child.pid], time.monotonic()
            child.returncode = code
        now = time.monotonic()
        if grace and term_at is None and code is None and watch.poll(now):  # a server, quiet for `grace` s
            server, term_at = watch.stopped(now), now
            try:
                os.killpg(child.pid, signal.SIGTERM)
            except OSError:
                pass
        late = now - started > deadline
        stragglers = code is not None and not eof and now - exited_at > 0.5
        stopping = term_at is not None and (code is not None or now - term_at > 1)
        if late or stragglers or stopping:  # background children hold the output pipe, or the time limit failed
            kill_all(None if late else spare)  # every process but PID 1 (and a kernel, for stragglers)
            if (late or stopping) and code is None:
                code = -9
            if not eof:
                while select.select([r], [], [], 0.5)[0] and os.read(r, 65536):
                    pass
                eof = True
    os.close(r)
    left = watch.ended(time.monotonic())
    if left:  # a server left running in the background goes with its command
        kill_all(spare)
        for _ in range(20):  # its sockets close as it exits
            time.sleep(0.05)
            reap()
            if not watch.left_listening():
                break
        if server is None:  # stopped now, unless a kernel holds it (its own server stays, as it does)
            server = None if watch.left_listening() else left
    elif server is None and watch.server is not None:  # it listened, then ended by itself or at the limit
        server = {**watch.server, "stopped_s": None}
    if not grace:  # a check's command: cleaned up, but its exit and time-out are its own
        server = None
    return (128 + -code if code < 0 else code), server
ROOT, LIMIT = "/workspace", 5000
def entry(path):
    """(kind, size, mtime, ctime) of a path, not following links; kind f(ile) d(ir) l(ink) o(ther)."""
    st = os.lstat(path)
    kind = "d" if stat.S_ISDIR(st.st_mode) else "f" if stat.S_ISREG(st.st_mode) else \
        "l" if stat.S_ISLNK(st.st_mode) else "o"
    return (kind, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
def scan():
    """{relative path: entry} of /workspace, at most LIMIT entries; (listing, complete)."""
    seen, stack = {}, [""]
    while stack:
        rel = stack.pop()
        try:
            it = os.scandir(ROOT + "/" + rel if rel else ROOT)
        except OSError:
            continue
        with it:
            for e in it:
                p = rel + "/" + e.name if rel else e.name
                try:
                    seen[p] = entry(e.path)
                except OSError:
                    continue
                if len(seen) >= LIMIT:
                    return seen, False
                if seen[p][0] == "d":
                    stack.append(p)
    return seen, True
def changes(before, after, complete):
    """What the block did to the workspace (JSON-ready)."""
    files = [[p, e[1]] for p, e in after.items() if e[0] == "f" and before.get(p) != e]
    dirs = [p for p, e in after.items() if e[0] == "d" and before.get(p, ("",))[0] != "d"]
    odd = [[p, e[0]] for p, e in after.items() if e[0] in "lo" and before.get(p) != e][:20]
    removed = [p for p, e in before.items() if p not in after or after[p][0] != e[0]] if complete else []
    try:
        fs = os.statvfs(ROOT)
        free, total = fs.f_bavail * fs.f_frsize, fs.f_blocks * fs.f_frsize
    except OSError:
        free = total = None
    size = sum(e[1] for e in after.values() if e[0] == "f")
    return {"files": files, "dirs": dirs, "removed": removed, "skipped": odd, "complete": complete,
            "free": free, "total": total, "size": size}
def refresh(listing, paths):
    """The host put these paths: take their state now, so they do not count as the block's writes."""
    for p in paths:
        try:
            listing[p] = entry(ROOT + "/" + p)
        except OSError:
            listing.pop(p, None)
def aside(path):
    """Get whatever the code left at path out of the way (a directory is renamed, as the host does)."""
    if os.path.isdir(path) and not os.path.islink(path):
        os.rename(path, path + ".moved-" + os.urandom(3).hex())
    elif os.path.lexists(path):
        os.unlink(path)
def place(rel, data, mode):
    """Write one host file into /workspace as a new regular file; links the code planted on the way are replaced."""
    cur = ROOT
    for part in rel.split("/")[:-1]:
        cur += "/" + part
        if os.path.islink(cur) or not os.path.isdir(cur):
            aside(cur)
            os.mkdir(cur)
    path = ROOT + "/" + rel
    aside(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
listing = {}
for line in sys.stdin.buffer:
    placed, server = True, None
    try:
        req = json.loads(line)
        argv, files = req["argv"], req.get("files") or {}
        try:
            for rel, (data, mode) in files.items():
                place(rel, base64.b64decode(data), mode)
        except OSError:  # the code filled the workspace: run the block from its text, if the host gave one
            placed = False
            argv = req.get("fallback") or argv
        refresh(listing, [*(req.get("put") or []), *files])
        code, server = run(argv, float(req["deadline"]), req.get("spare"), req.get("server"))
    except Exception as exc:
        frame(b"O", f"codeduet runner: {exc!r}\n".encode())
        code, server = 127, None
    reap()
    try:
        after, complete = scan()
        report = changes(listing, after, complete)
        listing = after
        payload = json.dumps({"exit_code": code, "changes": report, "placed": placed, "server": server})
        if len(payload) > 512 * 1024:  # too long a listing for one frame: the host copies everything back
            payload = json.dumps({"exit_code": code, "placed": placed, "server": server, "changes": {
                **report, "files": [], "dirs": [], "removed": [], "complete": False}})
    except Exception as exc:
        payload = json.dumps({"exit_code": code, "changes": None, "error": repr(exc), "server": server})
    frame(b"X", payload.encode())
'''



@functools.cache
def runner_source() -> str:
    """The runner's program: RUNNER after the server watch it uses (agents/sandbox/incontainer/listening.py)."""
    watch = (Path(incontainer.__file__).parent / "listening.py").read_text(encoding="utf-8")
    return f"{watch}\n{RUNNER}"


MAX_FRAME = 1 << 20
"""Largest frame the host accepts (the runner reads at most 64 KiB at a time)."""


class RunnerBroken(Exception):
    """The runner's stream ended or broke the protocol: use `docker exec` instead."""


ANSWER_SLACK_S = 10.0
"""How long past a block's deadline the host waits for the runner's answer while its container still runs (a loaded
machine, a runner killing a large process tree)."""
ASK_EVERY_S = 1.0
"""Past the deadline, how often the container is asked whether it still runs: a paused one (`docker pause`) is lost
at once, not ANSWER_SLACK_S later."""


class RunnerClient:
    """Host side: sends one block at a time over the attach socket and reads its frames."""

    def __init__(self, api: Any, container_id: str):
        self.api, self.container_id = api, container_id
        self.raw = api.attach_socket(container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        self.sock: socket.socket = getattr(self.raw, "_sock", self.raw)
        self.buffer = b""
        self.ask_at: float | None = None  # past it, a silent runner's container is asked whether it still runs

    def close(self) -> None:
        """Close the attach connection (the container's stdin stays open)."""
        for closer in (getattr(self.raw, "close", None), getattr(self.sock, "close", None)):
            try:
                if closer:
                    closer()
            except OSError:
                pass

    def ended(self) -> bool:
        """Whether the runner's stream has closed between blocks (its container stopped or was removed); False when
        it is open, or when this connection cannot tell."""
        if not isinstance(self.sock, socket.socket) or self.buffer:
            return False
        try:
            self.sock.settimeout(0)
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True
        finally:
            try:
                self.sock.settimeout(None)
            except OSError:
                pass

    def _fill(self, need: int, until: float) -> None:
        """Read docker's stdout frames until `need` bytes of the runner's own stream are buffered."""
        while len(self.buffer) < need:
            header = self._recv_exactly(8, until)
            stream, size = header[0], struct.unpack(">I", header[4:])[0]
            payload = self._recv_exactly(size, until)
            if stream == 1:
                self.buffer += payload

    def _recv_exactly(self, n: int, until: float) -> bytes:
        data = b""
        while len(data) < n:
            now = time.monotonic()
            left = until - now
            if left <= 0:
                raise RunnerBroken("no answer from the runner in time")
            ask_at = self.ask_at
            self.sock.settimeout(left if ask_at is None else min(left, max(ask_at - now, 0.0) + ASK_EVERY_S))
            try:
                chunk = self.sock.recv(n - len(data))
            except socket.timeout:
                if ask_at is not None and time.monotonic() >= ask_at and lost_state(self.api, self.container_id, ""):
                    raise RunnerBroken("the runner's container no longer runs (paused or stopped)") from None
                continue
            except OSError as exc:
                raise RunnerBroken(f"runner stream: {exc}") from None
            if not chunk:
                raise RunnerBroken("the runner's stream ended")
            data += chunk
        return data

    def run(self, argv: list[str], deadline: float, on_output: Callable[[bytes], None],
            extra: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        """Run argv to completion; output goes to on_output; returns the exit code and the rest of the runner's
        answer (`changes`, `placed`). `extra`: `files` to write first (path -> [base64, mode]), the `fallback`
        argv if they cannot be written, and the paths `put` with put_archive."""
        request = json.dumps({"argv": argv, "deadline": deadline, **(extra or {})}).encode() + b"\n"
        try:
            self.sock.sendall(request)
        except OSError as exc:
            raise RunnerBroken(f"runner stream: {exc}") from None
        self.ask_at = time.monotonic() + deadline  # the runner has answered by then unless its container is stuck
        until = self.ask_at + ANSWER_SLACK_S
        while True:
            self._fill(5, until)
            tag, size = self.buffer[:1], struct.unpack(">I", self.buffer[1:5])[0]
            if tag not in (b"O", b"X") or size > MAX_FRAME:
                raise RunnerBroken("the runner broke the protocol")
            self._fill(5 + size, until)
            payload, self.buffer = self.buffer[5:5 + size], self.buffer[5 + size:]
            if tag == b"O":
                on_output(payload)
                continue
            try:
                data = json.loads(payload)
                return int(data["exit_code"]), data
            except (ValueError, KeyError, TypeError, AttributeError):
                raise RunnerBroken("the runner broke the protocol") from None
