"""Faults around a run rather than inside it, through the real CLI and real Docker: the sandbox container removed,
killed or paused from outside while a block runs, or between two blocks; the disk that holds the run folder filling
up. What was recorded before is never lost, and the user sees one line."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from functools import partial
from pathlib import Path

import pytest
import yaml

from agents.sandbox.docker_executor import LABEL, LABEL_WORKSPACE
from tests.conftest import IMAGE, py
from tests.helpers import ROOT, RUN_PY, containers_under, run_cli, sandbox_runs, wait_for

FIRST = "import os\nos.makedirs('out')\nopen('out/first.txt', 'w').write('kept')\nprint('first block')"
SLOW = ("import subprocess\nopen('during.txt', 'w').write('x')\nprint('slow block started', flush=True)\n"
        "subprocess.run(['sleep', '300'])")
"""Its `sleep 300` shows in the container's process list once the line above was printed."""
AFTER = ("import os, socket\nprint('after:', open('out/first.txt').read(), os.path.exists('during.txt'), "
         "socket.gethostname())")


def write_scenario(path: Path, replies: list[str], name: str, **extra) -> Path:
    data = {"name": name, "task": "Print the answer.", "model": {"provider": "scripted", "replies": replies},
            "termination": {"contains": "TERMINATE"}, "user_proxy": {"max_consecutive_auto_reply": 5},
            "sandbox": {"image": IMAGE, "timeout": 4}, "strategy": {"attempts": 1}, **extra}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def start(scenario: Path, ws: Path) -> subprocess.Popen:
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.Popen([sys.executable, str(RUN_PY), "run", str(scenario), "--workspace", str(ws)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                            stdin=subprocess.DEVNULL)


def run_and_meddle(scenario: Path, root: Path, tmp_path: Path, meddle) -> tuple[int, Path, str, str]:
    """Run the scenario through the real CLI and call meddle(proc, run_dir) from outside once its run folder exists;
    return the exit code, the run folder and the output. The test's containers are unpaused and removed whatever
    happens."""
    name = yaml.safe_load(scenario.read_text())["name"]
    proc = start(scenario, root)
    try:
        run_dir = wait_for(lambda: only_run_dir(root, name), proc=proc)
        meddle(proc, run_dir)
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        clear_containers(tmp_path)
    return proc.returncode, run_dir, out, err


def events(run_dir: Path) -> list[dict]:
    """Every line of events.jsonl, each one whole JSON (a partial line fails here)."""
    path = run_dir / "events.jsonl"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    assert not text or text.endswith("\n"), "events.jsonl ends inside a line"
    return [json.loads(line) for line in text.splitlines()]


def only_run_dir(ws: Path, name: str) -> Path | None:
    dirs = list((ws / name).glob("*/events.jsonl"))
    return dirs[0].parent if len(dirs) == 1 else None


def executions(run_dir: Path) -> list[dict]:
    return [e for m in events(run_dir) if m["type"] == "message" and m.get("role") == "execution"
            for e in (m.get("outcome") or {}).get("executions", [])]


def container_of(run_dir: Path):
    import docker

    return docker.from_env().containers.get(f"codeduet-{run_dir.name}")


def clear_containers(root: Path) -> None:
    """Unpause and remove what a test left under root (only its own containers: found by their workspace)."""
    import docker

    client = docker.from_env()
    for c in client.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True):
        if (c.labels or {}).get(LABEL_WORKSPACE, "").startswith(str(root)):
            for step in (c.unpause, partial(c.remove, force=True, v=True)):
                try:
                    step()
                except docker.errors.APIError:
                    pass


# -- the container goes away ------------------------------------------------------------------------

LOSS = {"rm": ("removed from outside", "stopped from outside"), "kill": ("stopped from outside",),
        "pause": ("paused from outside",)}
"""What the line says: `docker rm -f` kills first, so the run may see the container stopped before it is gone."""


@pytest.mark.docker
@pytest.mark.parametrize("how", list(LOSS))
def test_a_container_gone_under_a_block_is_said_in_one_line_and_the_run_goes_on(sandbox_image, tmp_path, how):
    scenario = write_scenario(tmp_path / "lost.yaml", [py(FIRST), py(SLOW), py(AFTER)], "lost")
    old: list[str] = []

    def meddle(proc, run_dir):
        wait_for(lambda: sandbox_runs(tmp_path, "sleep 300"), proc=proc)  # block 2 printed, and sleeps
        container = container_of(run_dir)
        old.append(container.id)
        {"rm": lambda: container.remove(force=True), "kill": container.kill, "pause": container.pause}[how]()

    code, run_dir, out, err = run_and_meddle(scenario, tmp_path / "ws", tmp_path, meddle)
    assert code == 0, (out, err)
    assert "Traceback" not in out + err
    first, lost, after = executions(run_dir)
    assert first["exit_code"] == 0 and first["sandbox_lost"] is None
    assert lost["sandbox_lost"].startswith(LOSS[how]) and lost["exit_code"] == 125
    notes = [ln for ln in lost["output"].splitlines() if ln.startswith("[codeduet: the sandbox container was")]
    assert len(notes) == 1 and lost["sandbox_lost"] in notes[0] and "runs in a fresh container" in notes[0]
    assert "slow block started" in lost["output"]  # what it printed before is kept
    assert "runner stopped answering" not in lost["output"]
    assert after["exit_code"] == 0 and after["output"].startswith("after: kept False")  # a fresh container
    assert not (run_dir / "workspace" / "during.txt").exists()
    transcript = json.loads((run_dir / "transcript.json").read_text())
    assert transcript["status"] == "success"
    assert [m["role"] for m in transcript["messages"]] == [e["role"] for e in events(run_dir)
                                                          if e["type"] == "message"]
    assert any(lost["sandbox_lost"] in line for line in out.splitlines())  # the terminal showed it
    import docker

    with pytest.raises(docker.errors.NotFound):
        docker.from_env().containers.get(old[0])
    assert containers_under(tmp_path) == []


@pytest.mark.docker
def test_a_container_removed_between_blocks_is_replaced_before_the_next_one(sandbox_image, tmp_path):
    slow_reply = py(AFTER) + "\n" + "\n".join(f"More words, line {i}." for i in range(40))
    scenario = write_scenario(tmp_path / "between.yaml", [py(FIRST), slow_reply], "between",
                              model={"provider": "scripted", "replies": [py(FIRST), slow_reply], "line_delay_s": 0.1})

    def meddle(proc, run_dir):
        wait_for(lambda: executions(run_dir), proc=proc)  # block 1 ran; the next reply is being generated
        container_of(run_dir).remove(force=True)

    code, run_dir, out, err = run_and_meddle(scenario, tmp_path / "ws", tmp_path, meddle)
    assert code == 0, (out, err)
    first, second = executions(run_dir)
    assert second["exit_code"] == 0 and second["sandbox_lost"] is None
    assert second["output"].startswith("[codeduet: the sandbox container was removed from outside")
    assert "after: kept False" in second["output"]
    assert containers_under(tmp_path) == []


@pytest.mark.docker
def test_a_container_lost_again_and_again_ends_the_run_with_one_line(sandbox_image, tmp_path):
    scenario = write_scenario(tmp_path / "again.yaml", [py(SLOW)] * 4, "again",
                              user_proxy={"max_consecutive_auto_reply": 6})

    def meddle(proc, run_dir):
        for _ in range(3):
            wait_for(lambda: sandbox_runs(tmp_path, "sleep 300"), proc=proc)
            container_of(run_dir).remove(force=True)

    code, run_dir, out, err = run_and_meddle(scenario, tmp_path / "ws", tmp_path, meddle)
    assert code == 3, (out, err)
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "the sandbox container was lost 3 times" in errors[0], err
    assert "Traceback" not in out + err
    assert len(executions(run_dir)) == 2  # the first two losses were reported, and the run went on
    assert json.loads((run_dir / "transcript.json").read_text())["status"] == "error"
    assert containers_under(tmp_path) == []


@pytest.mark.docker
def test_a_fresh_container_waits_for_its_lost_predecessor_to_let_go_of_the_name(sandbox_image, tmp_path):
    # under load the daemon removes a killed container in the background; its replacement, which takes the same
    # name, was refused (409 Conflict) and the run ended in an error. A container left with the name stands in.
    import uuid

    import docker

    from agents.record.run_folder import container_name
    from agents.sandbox.config import SandboxConfig
    from agents.sandbox.docker_executor import DockerExecutor

    run_id = f"conflict-{uuid.uuid4().hex[:8]}"
    client = docker.from_env()
    leftover = client.containers.create(sandbox_image, command=["true"], name=container_name(run_id),
                                        labels={LABEL: run_id})
    ex = DockerExecutor(SandboxConfig(image=sandbox_image, timeout=10), tmp_path / "ws", run_id)
    try:
        ex.start()
        assert ex.container.id != leftover.id
        assert ex.execute("print('fresh')", "python").output.strip() == "fresh"
    finally:
        ex.stop()
        client.close()
    assert containers_under(tmp_path) == []


# -- the disk that holds the run folder fills up ----------------------------------------------------

@pytest.fixture
def small_disk(tmp_path: Path):
    """A 1 MiB tmpfs as the workspaces root (mounting needs root: skipped otherwise), unmounted at the end."""
    root = tmp_path / "small"
    root.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(root)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    yield root
    subprocess.run(["umount", "-l", str(root)], check=False)


def fill(root: Path) -> Path:
    """Write a file under root until the disk refuses more; return it."""
    filler = root / "filler.bin"
    with open(filler, "wb", buffering=0) as fh:
        chunk = b"\0" * 4096
        try:
            while True:
                fh.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_an_event_the_full_disk_cuts_short_is_taken_back_whole(small_disk):
    from agents.loop.errors import DiskFull
    from agents.record.transcript import JsonlRecorder, load_transcript

    rec = JsonlRecorder(small_disk, {"run_id": "r1", "scenario": {"name": "t"}})
    rec.event("message", role="task", content="short")
    fill(small_disk)
    before = (small_disk / "events.jsonl").read_bytes()
    with pytest.raises(DiskFull) as caught:
        rec.event("message", role="assistant", content="x" * 20000)  # longer than what is left of its last page
    assert "is full" in str(caught.value) and "\n" not in str(caught.value)
    assert (small_disk / "events.jsonl").read_bytes() == before  # the partial line was taken back
    with pytest.raises(DiskFull):
        rec.event("message", role="user_proxy", content="y")  # nothing after a lost event, even a short one
    rec.finish("error", "the disk is full")  # no exception; the end, if the disk takes it; no transcript.json
    after = (small_disk / "events.jsonl").read_bytes()
    assert after.startswith(before) and [json.loads(line)["type"] for line in after[len(before):].splitlines()] in (
        [], ["end"])
    assert not (small_disk / "transcript.json").exists() and not list(small_disk.glob("*.tmp"))
    warnings: list[str] = []
    data = load_transcript(small_disk, warn=warnings.append)
    assert [m["content"] for m in data["messages"]] == ["short"] and len(warnings) == 1
    assert data["status"] == ("error" if after != before else "interrupted")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.fixture
def ui_on(tmp_path: Path):
    """`codeduet ui` serving a workspaces root: ui_on(root) -> its URL; stopped at the end."""
    procs = []

    def start_ui(root: Path) -> str:
        port = free_port()
        (tmp_path / "scenarios").mkdir(exist_ok=True)
        proc = subprocess.Popen([sys.executable, str(RUN_PY), "ui", "--port", str(port), "--workspace", str(root),
                                 "--scenarios", str(tmp_path / "scenarios")], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, cwd=ROOT)
        procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: get_or_none(url + "/"), timeout=60, proc=proc)
        return url

    yield start_ui
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def get_or_none(url: str) -> int | None:
    try:
        return get(url)[0]
    except OSError:
        return None


BIG = "open('big.bin', 'wb').write(b'x' * (3 << 20))\nprint('wrote big.bin')"


@pytest.mark.docker
@pytest.mark.parametrize("how", ["filled-from-outside", "filled-by-the-copy-back"])
def test_a_full_disk_ends_the_run_with_one_line_and_keeps_every_event(sandbox_image, tmp_path, small_disk, ui_on,
                                                                      how):
    url = ui_on(small_disk)
    second = py(SLOW) if how == "filled-from-outside" else py(BIG)
    scenario = write_scenario(tmp_path / "full.yaml", [py(FIRST), second, py(AFTER)], "full")

    def meddle(proc, run_dir):
        if how == "filled-from-outside":
            wait_for(lambda: sandbox_runs(tmp_path, "sleep 300"), proc=proc)
            proc.send_signal(signal.SIGSTOP)  # it writes nothing while the disk fills
            try:
                fill(small_disk)
            finally:
                proc.send_signal(signal.SIGCONT)

    code, run_dir, out, err = run_and_meddle(scenario, small_disk, tmp_path, meddle)
    assert code == 3, (out, err)
    assert "Traceback" not in out + err
    errors = [ln for ln in err.splitlines() if ln.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: the disk holding ") and "is full" in errors[0], err
    kept = events(run_dir)  # every line whole
    assert kept[0]["type"] == "start"
    roles = [e["role"] for e in kept if e["type"] == "message"]
    assert roles[:3] == ["task", "assistant", "execution"]  # everything before the disk filled is there
    assert "first block" in executions(run_dir)[0]["output"]
    replay = run_cli("replay", str(run_dir), timeout=120)  # the disk is still full
    assert replay.returncode == 0, replay.stderr
    assert "first block" in replay.stdout and "Traceback" not in replay.stderr
    assert containers_under(tmp_path) == []
    assert get(url + "/")[0] == 200  # the page keeps serving, this run listed
    status, page = get(f"{url}/run/full/{run_dir.name}")
    assert status == 200 and "first block" in page
