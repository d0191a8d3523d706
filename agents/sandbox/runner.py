"""The warm runner: PID 1 of the sandbox container runs each block on request, fed over the container's attached
stdin, so a block costs one fork+exec inside the container instead of a `docker exec` round trip.

Wire format, over the attach stream (the bytes docker carries for the container's stdin and stdout):
- host -> runner: one JSON line per block, {"argv": [...], "deadline": seconds};
- runner -> host: frames `tag (1 byte) + length (4 bytes, big endian) + payload`; tag O is output,
  tag X ends the block with a JSON payload {"exit_code": N}.

The runner is no more trusted than the block it runs (same user, same container): the host bounds every frame,
treats a broken stream as a broken runner, and falls back to `docker exec`.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from typing import Any, Callable

RUNNER = r'''
import ctypes, json, os, select, signal, struct, subprocess, sys, time
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
def run(argv, deadline):
    r, w = os.pipe()
    try:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=w, stderr=w, start_new_session=True,
                                 cwd="/workspace")
    except OSError as exc:
        os.close(r); os.close(w)
        frame(b"O", f"codeduet runner: {exc}\n".encode())
        return 127
    os.close(w)
    started, code, exited_at, eof = time.monotonic(), None, None, False
    while not eof or code is None:
        ready = select.select([r], [], [], 0.05)[0] if not eof else []
        if ready:
            data = os.read(r, 65536)
            if data:
                frame(b"O", data)
            else:
                eof = True
        elif eof:
            time.sleep(0.02)
        status = reap()
        if code is None and child.pid in status:
            code, exited_at = status[child.pid], time.monotonic()
            child.returncode = code
        now = time.monotonic()
        late = now - started > deadline
        stragglers = code is not None and not eof and now - exited_at > 0.5
        if late or stragglers:  # background children hold the output pipe, or the time limit failed
            os.kill(-1, signal.SIGKILL)  # every process but PID 1
            if late and code is None:
                code = -9
            if not eof:
                while select.select([r], [], [], 0.5)[0] and os.read(r, 65536):
                    pass
                eof = True
    os.close(r)
    return 128 + -code if code < 0 else code
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
for line in sys.stdin.buffer:
    try:
        req = json.loads(line)
        code = run(req["argv"], float(req["deadline"]))
    except Exception as exc:
        frame(b"O", f"codeduet runner: {exc!r}\n".encode())
        code = 127
    reap()
    frame(b"X", json.dumps({"exit_code": code}).encode())
'''

MAX_FRAME = 1 << 20
"""Largest frame the host accepts (the runner reads at most 64 KiB at a time)."""


class RunnerBroken(Exception):
    """The runner's stream ended or broke the protocol: use `docker exec` instead."""


class RunnerClient:
    """Host side: sends one block at a time over the attach socket and reads its frames."""

    def __init__(self, api: Any, container_id: str):
        self.raw = api.attach_socket(container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        self.sock: socket.socket = getattr(self.raw, "_sock", self.raw)
        self.buffer = b""

    def close(self) -> None:
        """Close the attach connection (the container's stdin stays open)."""
        for closer in (getattr(self.raw, "close", None), getattr(self.sock, "close", None)):
            try:
                if closer:
                    closer()
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
            left = until - time.monotonic()
            if left <= 0:
                raise RunnerBroken("no answer from the runner in time")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(n - len(data))
            except (socket.timeout, OSError) as exc:
                raise RunnerBroken(f"runner stream: {exc}") from None
            if not chunk:
                raise RunnerBroken("the runner's stream ended")
            data += chunk
        return data

    def run(self, argv: list[str], deadline: float, on_output: Callable[[bytes], None]) -> int:
        """Run argv to completion; output goes to on_output; returns the exit code."""
        request = json.dumps({"argv": argv, "deadline": deadline}).encode() + b"\n"
        try:
            self.sock.sendall(request)
        except OSError as exc:
            raise RunnerBroken(f"runner stream: {exc}") from None
        until = time.monotonic() + deadline + 10
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
                return int(json.loads(payload)["exit_code"])
            except (ValueError, KeyError, TypeError):
                raise RunnerBroken("the runner broke the protocol") from None
