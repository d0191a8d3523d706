"""The soak benchmark (benchmarks/soak.py): what it counts as a lost event or a leftover, on hand-made run folders
and a real reaper process; and what it found: a process running run after run kept each run's Docker sockets open."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.run_folder import new_run_dir
from agents.record.transcript import JsonlRecorder
from agents.sandbox.docker_executor import LABEL
from agents.sandbox.reaper import Reaper
from agents.scenario.spec import load_scenario
from benchmarks.soak_check import check_run, check_runs, proc_stats, reaper_processes


def finished_run(root, name="soak00"):
    run_dir, run_id = new_run_dir(root, name)
    rec = JsonlRecorder(run_dir, {"run_id": run_id, "run_dir": str(run_dir), "scenario": {"name": name}})
    rec.event("message", sender="user_proxy", role="task", content="Print 1.", attempt=1)
    rec.event("message", sender="assistant", role="assistant", content="```python\nprint(1)\n```", attempt=1)
    rec.finish("success", "bench")
    return run_dir


def test_a_whole_run_folder_has_no_problems_and_each_kind_of_damage_is_named(tmp_path):
    good, cut, unended, mismatched = (finished_run(tmp_path) for _ in range(4))
    assert check_run(good) == []
    with open(cut / "events.jsonl", "ab") as fh:
        fh.write(b'{"type": "mess')
    assert "does not end with a newline" in check_run(cut)[0]
    lines = (unended / "events.jsonl").read_bytes().splitlines(keepends=True)
    (unended / "events.jsonl").write_bytes(b"".join(lines[:-1]))
    assert any("does not end with one end event" in p for p in check_run(unended))
    transcript = json.loads((mismatched / "transcript.json").read_text())
    transcript["messages"].pop()
    (mismatched / "transcript.json").write_text(json.dumps(transcript))
    assert any("has 1 messages, events.jsonl 2" in p for p in check_run(mismatched))
    summary = check_runs(tmp_path)
    assert (summary["run_folders"], summary["runs_with_problems"], summary["messages"]) == (4, 3, 7)
    assert summary["statuses"] == {"success": 4}


def test_a_live_reaper_is_found_by_its_runs_id_and_gone_once_disarmed():
    reaper = Reaper(f"{LABEL}=20261125-000000-abcdef-a2")
    try:
        deadline = time.monotonic() + 5  # its command line reads empty for a moment after the start
        while not reaper_processes({"20261125-000000-abcdef"}) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reaper_processes({"20261125-000000-abcdef"}) == [reaper.proc.pid]
        assert reaper_processes({"20261125-000000-fedcba"}) == []
    finally:
        proc = reaper.proc
        reaper.disarm()
    assert proc.poll() is not None and reaper_processes({"20261125-000000-abcdef"}) == []


def test_proc_stats_reads_memory_and_descriptors_and_none_once_the_process_is_gone():
    rss, fds = proc_stats(os.getpid())
    assert rss > 10 * 2**20 and fds >= 3
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert proc_stats(int(done.stdout)) is None


def open_sockets() -> int:
    return sum(os.readlink(f"/proc/self/fd/{fd}").startswith("socket:") for fd in os.listdir("/proc/self/fd")
               if os.path.exists(f"/proc/self/fd/{fd}"))


@pytest.mark.docker
def test_run_after_run_in_one_process_leaves_no_docker_socket_open(sandbox_image, scenario_file, workspaces):
    """A Ray worker (or a Python API user) runs scenario after scenario in one process; each run's objects form
    reference cycles, so its Docker clients' pooled sockets stayed open until a full garbage collection (+6 per run,
    77 descriptors after 17 runs in a loop). The executor and the preflight now close their clients."""
    path = scenario_file(["```python\nprint(6 * 7)\n```"], checks=[{"stdout_contains": "42"}])
    assert run_scenario(load_scenario(path), RunOptions()).status == "success"
    gc.collect()
    gc.disable()  # as between two of the interpreter's full collections
    try:
        before = open_sockets()
        for _ in range(2):
            assert run_scenario(load_scenario(path), RunOptions()).status == "success"
        assert open_sockets() == before
    finally:
        gc.enable()
