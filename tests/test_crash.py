"""Crash safety: kill -9 and SIGTERM of a real `run.py run`, and two runs of one scenario at the same time."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from agents.record.transcript import load_transcript
from tests.conftest import IMAGE, py
from tests.helpers import ROOT, RUN_PY, containers_under, run_cli, sandbox_runs, wait_for, watchdog_pids

pytestmark = pytest.mark.docker

SLOW_BLOCK = "import time\nprint('second block started', flush=True)\ntime.sleep(300)"
FIRST_BLOCK = ("import os\nos.makedirs('out')\nopen('out/first.txt', 'w').write('written by block 1')\n"
               "open('table.csv', 'w').write('a,b\\n1,2\\n')\nprint('first block')")


def write_scenario(path: Path, replies: list[str], name: str, **extra) -> Path:
    data = {"name": name, "task": "Print the answer.", "model": {"provider": "scripted", "replies": replies},
            "termination": {"contains": "TERMINATE"}, "user_proxy": {"max_consecutive_auto_reply": 5},
            "sandbox": {"image": IMAGE, "timeout": 600}, **extra}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def start(scenario: Path, ws: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    return subprocess.Popen([sys.executable, str(RUN_PY), "run", str(scenario), "--workspace", str(ws), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def events(run_dir: Path) -> list[dict]:
    path = run_dir / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]




def only_run_dir(ws: Path, name: str) -> Path | None:
    dirs = list((ws / name).glob("*/events.jsonl"))
    return dirs[0].parent if len(dirs) == 1 else None


def message_roles(run_dir: Path) -> list[str]:
    return [e["role"] for e in events(run_dir) if e["type"] == "message"]


# -- kill -9 -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def killed_run(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str):
    """A run killed with SIGKILL while its second block executes: (run_dir, container, workspaces root)."""
    base = tmp_path_factory.mktemp("killed")
    ws = base / "ws"
    scenario = write_scenario(base / "killed.yaml", [py(FIRST_BLOCK), py(SLOW_BLOCK)], "killed")
    proc = start(scenario, ws)
    run_dir = wait_for(lambda: only_run_dir(ws, "killed"), proc=proc)
    wait_for(lambda: len(message_roles(run_dir)) >= 4, proc=proc)  # the second block was sent to the sandbox
    wait_for(lambda: sandbox_runs(base, "block02.py"), proc=proc)  # inside the block's sleep
    for pid in watchdog_pids(run_dir.name):  # its reaper dies too (test_kill_9_... below keeps it): an orphan stays
        os.kill(pid, signal.SIGKILL)
    proc.send_signal(signal.SIGKILL)
    proc.wait()  # reaped: the label's pid is now dead
    container = next(e["container"] for e in events(run_dir) if e["type"] == "sandbox")
    yield run_dir, container, ws
    import docker

    try:  # safety net only; test_next_start_removes_the_orphan asserts the real cleanup
        docker.from_env().containers.get(container).remove(force=True, v=True)
    except Exception:
        pass


@pytest.mark.serial  # an orphan another test's start would remove
def test_kill_9_keeps_every_message_in_events(killed_run):
    run_dir, container, ws = killed_run
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    parsed = [json.loads(line) for line in lines]  # every line is whole: each event was flushed and fsynced
    assert parsed[0]["type"] == "start" and parsed[-1]["type"] != "end"
    assert message_roles(run_dir) == ["task", "assistant", "execution", "assistant"]
    msgs = [e for e in parsed if e["type"] == "message"]
    assert "first block" in msgs[2]["content"]
    assert "second block started" in msgs[3]["content"]
    assert not (run_dir / "transcript.json").exists()
    data = load_transcript(run_dir)
    assert data["status"] == "interrupted" and data.get("recovered_from_events") is True
    assert [m["content"] for m in data["messages"]] == [m["content"] for m in msgs]


@pytest.mark.serial  # an orphan another test's start would remove
def test_kill_9_keeps_every_file_written_by_finished_blocks(killed_run):
    run_dir, _, _ = killed_run
    ws = run_dir / "workspace"  # the container's workspace is copied back after every block, not at the end
    assert (ws / "out" / "first.txt").read_text() == "written by block 1"
    assert (ws / "table.csv").read_text() == "a,b\n1,2\n"
    assert "first.txt" in (ws / "block01.py").read_text() and "second block started" in (ws / "block02.py").read_text()


@pytest.mark.serial  # an orphan another test's start would remove
@pytest.mark.skipif(not (ROOT / "agents" / "replay" / "cli.py").exists(), reason="replay not written yet")
def test_replay_shows_the_killed_run(killed_run):
    run_dir, _, _ = killed_run
    proc = run_cli("replay", str(run_dir))
    assert proc.returncode == 0, proc.stderr
    assert "first block" in proc.stdout and "second block started" in proc.stdout


@pytest.mark.serial  # an orphan another test's start would remove
def test_next_start_removes_the_orphan(killed_run, tmp_path):
    run_dir, container, ws = killed_run
    import docker

    orphan = docker.from_env().containers.get(container)
    assert orphan.labels["org.codeduet.run"] == run_dir.name
    volume = next(m["Name"] for m in orphan.attrs["Mounts"] if m["Destination"] == "/workspace")
    scenario = write_scenario(tmp_path / "after.yaml", [py("print('after the crash')")], "after",
                              termination={"success": True})
    proc = run_cli("run", str(scenario), "--workspace", str(ws))
    assert proc.returncode == 0, proc.stderr
    line = next((ln for ln in proc.stdout.splitlines() if "orphaned sandbox container" in ln), "")
    assert re.match(r"removed \d+ orphaned sandbox container\(s\) left by a killed run: .*" + container, line), \
        proc.stdout
    with pytest.raises(docker.errors.NotFound):
        docker.from_env().containers.get(container)
    with pytest.raises(docker.errors.NotFound):  # its workspace volume went with it
        docker.from_env().volumes.get(volume)
    assert containers_under(ws) == []


def test_kill_9_of_the_cli_removes_its_container_within_seconds(sandbox_image, tmp_path):
    """The run's reaper (a watchdog process of its own session) removes the container when `codeduet run` dies by
    kill -9, with no later codeduet start (issue 20 item 8)."""
    ws = tmp_path / "ws"
    scenario = write_scenario(tmp_path / "k9.yaml", [py(SLOW_BLOCK)], "k9")
    proc = start(scenario, ws)
    run_dir = wait_for(lambda: only_run_dir(ws, "k9"), proc=proc)
    wait_for(lambda: sandbox_runs(tmp_path, "block01.py"), proc=proc)
    assert watchdog_pids(run_dir.name), "a reaper watches the container"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    wait_for(lambda: containers_under(tmp_path) == [], timeout=20)
    wait_for(lambda: watchdog_pids(run_dir.name) == [], timeout=10)  # and the reaper is gone too
    assert message_roles(run_dir) == ["task", "assistant"]  # the run folder keeps what was said


@pytest.mark.serial  # an orphan another test's start would remove
def test_sandbox_status_names_orphans(sandbox_image, tmp_path):
    """An orphan (its process and its reaper both killed) is named as one by `sandbox status`; a live run's
    container is not (issue 20 item 8)."""
    ws = tmp_path / "ws"
    scenario = write_scenario(tmp_path / "orph.yaml", [py(SLOW_BLOCK)], "orph")
    proc = start(scenario, ws)
    run_dir = wait_for(lambda: only_run_dir(ws, "orph"), proc=proc)
    wait_for(lambda: sandbox_runs(tmp_path, "block01.py"), proc=proc)
    container = f"codeduet-{run_dir.name}"
    live = run_cli("sandbox", "status")
    assert re.search(rf"{container}  run {run_dir.name}  in use by pid {proc.pid}", live.stdout), live.stdout
    for pid in watchdog_pids(run_dir.name):
        os.kill(pid, signal.SIGKILL)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    dead = run_cli("sandbox", "status")
    assert re.search(rf"{container}  run {run_dir.name}  orphan: its process \(pid {proc.pid}\) is gone",
                     dead.stdout), dead.stdout
    assert re.search(r"containers: \d+ codeduet container\(s\) present, [1-9]\d* orphaned", dead.stdout)
    assert container in run_cli("sandbox", "clean").stdout
    assert containers_under(tmp_path) == []


# -- SIGTERM -------------------------------------------------------------------------------------

@pytest.mark.parametrize("during", ["execution", "generation"])
def test_sigterm_ends_the_run_cleanly(sandbox_image, tmp_path, during):
    ws = tmp_path / "ws"
    if during == "execution":
        replies, model_extra = [py("print('first block')"), py(SLOW_BLOCK)], {}
    else:
        replies, model_extra = [py("print('never generated')")], {"delay_s": 300}
    scenario = write_scenario(tmp_path / "term.yaml", replies, "term")
    data = yaml.safe_load(scenario.read_text())
    data["model"].update(model_extra)
    scenario.write_text(yaml.safe_dump(data))
    proc = start(scenario, ws)
    run_dir = wait_for(lambda: only_run_dir(ws, "term"), proc=proc)
    if during == "execution":
        wait_for(lambda: sandbox_runs(tmp_path, "block02.py"), proc=proc)
    else:  # the task is recorded, then the model is asked (and sleeps)
        wait_for(lambda: message_roles(run_dir) == ["task"], proc=proc)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err
    assert out.rstrip().splitlines()[-1] == f"run: {run_dir} status=interrupted"  # the folder, as every ending
    transcript = json.loads((run_dir / "transcript.json").read_text())
    assert transcript["status"] == "interrupted"
    assert events(run_dir)[-1]["type"] == "end"
    expected = ["task", "assistant", "execution", "assistant"] if during == "execution" else ["task"]
    assert [m["role"] for m in transcript["messages"]] == expected
    assert containers_under(tmp_path) == []


def test_sigint_to_a_batch_alone_ends_its_runs_and_starts_no_more(sandbox_image, tmp_path):
    """`kill -INT` to the batch's process only (a terminal's Ctrl-C signals the whole group; a process manager
    signals the one): each running scenario ends as its own Ctrl-C ends it, and the waiting one never starts."""
    ws = tmp_path / "ws"
    paths = [write_scenario(tmp_path / f"slow{i}.yaml", [py(SLOW_BLOCK)], f"slow{i}") for i in range(3)]
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, str(RUN_PY), "run", *map(str, paths), "--jobs", "2", "--workspace",
                             str(ws)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    for name in ("slow0", "slow1"):
        wait_for(lambda n=name: sandbox_runs(ws / n, "block01.py"), proc=proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert err.strip().splitlines()[-1] == "interrupted"
    for name in ("slow0", "slow1"):
        run_dir = only_run_dir(ws, name)
        assert run_dir is not None and load_transcript(run_dir)["status"] == "interrupted"
        assert events(run_dir)[-1]["type"] == "end"
    assert not (ws / "slow2").exists()
    assert containers_under(tmp_path) == []


# -- concurrency ---------------------------------------------------------------------------------

TOGETHER = """
import os, socket, time
open("marker.txt", "w").write(socket.gethostname())
for _ in range(600):  # the test says go once both runs have their container
    if os.path.exists("go"):
        break
    time.sleep(0.1)
print("HOST", socket.gethostname())
print("FILES", sorted(os.listdir(".")))
"""


def test_two_runs_of_one_scenario_at_once_are_separate(sandbox_image, tmp_path):
    ws = tmp_path / "ws"
    scenario = write_scenario(tmp_path / "twin.yaml", [py(TOGETHER)], "twin", termination={"success": True})
    procs = [start(scenario, ws, "--json"), start(scenario, ws, "--json")]
    names = wait_for(lambda: containers_under(ws) if len(containers_under(ws)) == 2 else None)
    # both containers exist at the same moment, and neither block can end before it is given its go
    import docker

    client = docker.from_env()

    def block_started(name: str) -> bool:  # a file put before the container starts lies under its volume, unseen
        try:
            return client.containers.get(name).exec_run(["test", "-f", "/workspace/marker.txt"]).exit_code == 0
        except docker.errors.APIError:  # created, not running yet
            return False

    wait_for(lambda: all(block_started(name) for name in names) or None, proc=procs[0])
    go = io.BytesIO()
    with tarfile.open(fileobj=go, mode="w") as tar:
        tar.addfile(tarfile.TarInfo("go"), io.BytesIO(b""))
    for name in names:
        client.containers.get(name).put_archive("/workspace", go.getvalue())
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    run_dirs = {r["run_dir"] for r in results}
    assert len(run_dirs) == 2 and all(r["status"] == "success" for r in results)
    containers = {next(e["container"] for e in events(Path(d)) if e["type"] == "sandbox") for d in run_dirs}
    assert len(containers) == 2
    hosts = set()
    for d in run_dirs:
        report = next(m for m in load_transcript(d)["messages"] if m["role"] == "execution")
        out = report["outcome"]["executions"][0]["output"]
        hosts.add(re.search(r"HOST (\S+)", out).group(1))
        assert "FILES ['block01.py', 'go', 'marker.txt']" in out  # only its own workspace
    assert len(hosts) == 2


@pytest.mark.serial  # an orphan another test's start would remove
def test_orphan_scan_survives_containers_removed_meanwhile(sandbox_image, tmp_path):
    """Concurrent runs remove their containers while a starting run scans for orphans (batch --jobs N)."""
    import threading

    import docker

    from agents.sandbox.cleanup import codeduet_containers, remove_orphans
    from agents.sandbox.docker_executor import LABEL, LABEL_HOST, LABEL_PID

    client = docker.from_env()
    stop = threading.Event()
    churned = []

    def churn() -> None:  # another run: create, then remove, a labelled container, again and again
        while not stop.is_set():
            c = client.containers.run(sandbox_image, ["sleep", "30"], detach=True, network_mode="none",
                                      labels={LABEL: f"churn-{len(churned)}", LABEL_PID: str(os.getpid()),
                                              LABEL_HOST: "elsewhere"})
            churned.append(c.name)
            c.remove(force=True)

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        for _ in range(60):
            codeduet_containers(client)
            remove_orphans(client)
    finally:
        stop.set()
        thread.join()
    assert len(churned) > 0
