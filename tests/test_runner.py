"""The warm runner (PID 1 of the sandbox runs each block): protected from the blocks it runs, exact with output,
and replaced by `docker exec` when its stream breaks. Real containers, no mocks."""

from __future__ import annotations

import _thread
import socket
import threading
from pathlib import Path

import pytest

from agents.sandbox.config import SandboxConfig
from agents.sandbox.docker_executor import DockerExecutor

pytestmark = pytest.mark.docker


@pytest.fixture
def executor(sandbox_image: str, tmp_path: Path):
    ex = DockerExecutor(SandboxConfig(image=sandbox_image, timeout=5, output_limit=400_000), tmp_path / "ws")
    ex.start()
    yield ex
    ex.stop()


def test_blocks_run_through_the_runner_with_exit_codes_and_both_streams(executor):
    r = executor.execute("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)")
    assert r.exit_code == 3 and "out" in r.output and "err" in r.output
    assert executor.warm and executor.runner is not None  # no fallback happened
    ps = executor.execute("print(open('/proc/1/cmdline').read().split(chr(0))[:2])")
    assert "'python3', '-c'" in ps.output  # PID 1 is the runner


def test_a_block_cannot_reach_the_runners_pipes_or_trace_it(executor):
    r = executor.execute(
        "import os, ctypes\n"
        "try:\n    os.listdir('/proc/1/fd'); print('FDS OPEN')\nexcept PermissionError:\n    print('fds refused')\n"
        "libc = ctypes.CDLL(None)\n"
        "print('ptrace', libc.ptrace(16, 1, 0, 0))\n")  # PTRACE_ATTACH
    assert "fds refused" in r.output and "FDS OPEN" not in r.output
    assert "ptrace -1" in r.output
    assert executor.execute("print('still answering')").output.strip() == "still answering"


def test_multibyte_output_split_across_reads_is_decoded_whole(executor):
    r = executor.execute("import sys\nsys.stdout.write('é' * 150000)\n")  # 300 kB: many 64 KiB reads
    assert r.exit_code == 0 and r.output == "é" * 150000 and "\ufffd" not in r.output


def test_a_broken_runner_stream_falls_back_to_docker_exec(executor):
    assert executor.execute("print(1)").output.strip() == "1"
    executor.runner.sock.shutdown(socket.SHUT_RDWR)  # the attach connection breaks, as when the daemon drops it
    r = executor.execute("print('via exec')")
    assert r.exit_code == 0 and r.output.strip() == "via exec"
    assert executor.warm is False and executor.runner is None
    assert executor.execute("import sys; sys.exit(4)").exit_code == 4


def test_an_interrupted_block_retires_the_runner_so_its_late_frames_are_never_read(executor):
    timer = threading.Timer(0.5, _thread.interrupt_main)  # Ctrl-C while the block sleeps
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        executor.execute("import time\ntime.sleep(2)\nprint('late')")
    timer.join()
    assert executor.warm is False and executor.runner is None
    r = executor.execute("print('next block')")
    assert r.output.strip() == "next block" and "late" not in r.output
