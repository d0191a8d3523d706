"""`run.py run ... --ray ADDRESS` on a real two-node Ray cluster (ray.cluster_utils.Cluster), real Docker,
scripted model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from agents.record.transcript import load_transcript
from agents.sandbox.docker_executor import LABEL, LABEL_PID
from tests.conftest import ROOT, py
from tests.helpers import RUN_PY, run_cli

ray = pytest.importorskip("ray", reason="the optional extra codeduet[ray] is not installed")
pytestmark = [pytest.mark.docker, pytest.mark.slow]

SANDBOXES_PER_NODE = 1


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Two Ray nodes, each advertising one sandbox (no llm); their workers keep runs in flight under `scratch`."""
    from ray.cluster_utils import Cluster

    scratch = tmp_path_factory.mktemp("ray-scratch")
    saved = {k: os.environ.get(k) for k in ("CODEDUET_RAY_SCRATCH", "PYTHONPATH")}
    os.environ["CODEDUET_RAY_SCRATCH"] = str(scratch)  # the nodes' workers inherit it, and this checkout
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), saved["PYTHONPATH"]]))
    node_args = {"num_cpus": 1, "resources": {"sandbox": SANDBOXES_PER_NODE},
                 "object_store_memory": 100 * 2**20, "include_dashboard": False}
    c = Cluster(initialize_head=True, head_node_args=node_args)
    pids: set[int] = set()  # Ray's own processes, and the workers the tests saw running tasks
    try:
        worker = c.add_node(**{k: v for k, v in node_args.items() if k != "include_dashboard"})
        c.wait_for_nodes()
        for node in (c.head_node, worker):
            pids |= {info.process.pid for infos in node.all_processes.values() for info in infos}
        yield {"address": c.address, "scratch": scratch, "nodes": {c.head_node.node_id, worker.node_id},
               "pids": pids}
    finally:
        c.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    deadline = time.monotonic() + 30  # workers exit on their own once their raylet is gone
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [p for p in pids if alive(p)] == [], "Ray processes were left running"


def alive(pid: int) -> bool:
    """A live (not zombie) process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def starts(scratch: Path) -> list[dict[str, Any]]:
    """Every task attempt that started on a node (each writes task.json in its own scratch folder)."""
    found = []
    for f in scratch.glob("codeduet-ray-*/task.json"):
        try:
            found.append(json.loads(f.read_text()))
        except (OSError, json.JSONDecodeError):  # being written, or its folder being removed
            continue
    return found


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    """Most intervals open at the same instant."""
    edges = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def our_containers(pids: set[int]) -> list[str]:
    """Codeduet containers created by these worker processes (other test runs share the daemon)."""
    import docker

    listed = docker.from_env().containers.list(all=True, filters={"label": LABEL}, ignore_removed=True)
    return [c.name for c in listed if int((c.labels or {}).get(LABEL_PID, "0")) in pids]


def test_a_batch_fans_out_over_both_nodes_within_caps_and_a_killed_worker_is_retried(
        sandbox_image, scenario_file, tmp_path, cluster):
    paths = [scenario_file([py(f"import time\ntime.sleep(2)\nopen('out.txt', 'w').write('{i}')\nprint('done {i}')")],
                           name=f"fan{i}", checks=[{"stdout_contains": f"done {i}"}, {"file_exists": "out.txt"}])
             for i in range(6)]
    ws = tmp_path / "ws"
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, str(RUN_PY), "run", *map(str, paths), "--ray", cluster["address"],
                             "--json", "--workspace", str(ws)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=ROOT)
    seen: dict[tuple[int, int], dict[str, Any]] = {}
    victim, killed_at = None, 0.0
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        for start in starts(cluster["scratch"]):
            seen.setdefault((start["index"], start["ray_attempt"]), start)
        if victim is None and (0, 1) in seen:
            victim = seen[(0, 1)]
            os.kill(victim["pid"], signal.SIGKILL)  # the Ray worker running scenario 0, mid-run
            killed_at = time.time()
        time.sleep(0.05)
    out, err = proc.communicate(timeout=60)
    assert victim is not None, "the first task never started"
    assert proc.returncode == 0, err
    rows = [row for row in map(json.loads, out.splitlines()) if "batch" not in row]
    cluster["pids"].update(r["pid"] for r in rows)
    assert sorted(r["scenario"] for r in rows) == sorted(map(str, paths))
    by_name = {Path(r["scenario"]).stem: r for r in rows}

    # every run folder came back into the caller's workspaces, whole
    for i in range(6):
        row = by_name[f"fan{i}"]
        assert row["status"] == "success" and row["exit_code"] == 0, row
        run_dir = Path(row["run_dir"])
        assert run_dir.parent == ws / f"fan{i}"
        t = load_transcript(run_dir)
        assert t["status"] == "success" and t["run_dir"] == str(run_dir)
        assert (run_dir / "workspace" / "out.txt").read_text() == str(i)
        assert (run_dir / "workspace" / "block01.py").is_file() and (run_dir / "events.jsonl").is_file()
    assert len(list(ws.glob("*/*/transcript.json"))) == 6
    assert not list(ws.glob(".incoming-*"))

    # the killed task ran again, once, and only it
    assert by_name["fan0"]["ray_attempt"] == 2 and by_name["fan0"]["pid"] != victim["pid"]
    assert all(by_name[f"fan{i}"]["ray_attempt"] == 1 for i in range(1, 6))
    assert sorted(seen) == sorted([(0, 1), (0, 2)] + [(i, 1) for i in range(1, 6)])

    # tasks landed on both nodes, and no node ever ran more sandboxes at once than it advertises
    intervals = [(r["node_id"], r["task_started"], r["task_ended"]) for r in rows]
    intervals.append((victim["node_id"], victim["task_started"], killed_at))
    assert {node for node, _, _ in intervals} == cluster["nodes"]
    for node in cluster["nodes"]:
        assert max_overlap([(a, b) for n, a, b in intervals if n == node]) <= SANDBOXES_PER_NODE

    # no container is left, not even the killed worker's; no scratch folder either
    assert our_containers({r["pid"] for r in rows} | {victim["pid"]}) == []
    assert not list(cluster["scratch"].glob("codeduet-ray-*"))


@pytest.fixture
def good_and_broken(scenario_file) -> list[Path]:
    """A scenario that succeeds, and one that is valid for the caller but fails on its node: its sandbox image
    does not exist there (an inline model's typo is refused by the caller already, when the scenario loads)."""
    return [scenario_file([py("print('fine')")], name="fine"),
            scenario_file([py("print(1)")], name="broken", sandbox={"image": "codeduet-no-such-image:v0"})]


def test_a_run_that_fails_on_its_node_is_an_error_row_and_not_retried(sandbox_image, good_and_broken, tmp_path,
                                                                       cluster):
    ws = tmp_path / "ws"
    proc = run_cli("run", *map(str, good_and_broken), "--ray", cluster["address"], "--json", "--workspace", str(ws))
    assert proc.returncode == 3, proc.stderr
    rows = {Path(r["scenario"]).stem: r for r in map(json.loads, proc.stdout.splitlines()) if "batch" not in r}
    assert rows["fine"]["status"] == "success" and rows["fine"]["ray_attempt"] == 1
    broken = rows["broken"]
    assert broken["status"] == "error" and broken["exit_code"] == 3 and broken["ray_attempt"] == 1
    assert "codeduet-no-such-image:v0" in broken["reason"] and "run_dir" not in broken
    assert [d.parent.parent.name for d in ws.glob("*/*/transcript.json")] == ["fine"]


def test_the_summary_table_is_the_one_of_jobs(sandbox_image, good_and_broken, tmp_path, cluster):
    proc = run_cli("run", *map(str, good_and_broken), "--ray", cluster["address"], "--workspace", str(tmp_path))
    assert proc.returncode == 3, proc.stderr
    assert "batch summary" in proc.stdout
    table = [row for row in (line.split() for line in proc.stdout.splitlines()) if row and row[0].endswith(".yaml")]
    assert any(r[0].endswith("fine.yaml") and r[1] == "success" and str(tmp_path) in r[-1] for r in table), proc.stdout
    assert any(r[0].endswith("broken.yaml") and r[1] == "error" for r in table), proc.stdout
    assert proc.stdout.rstrip().splitlines()[-1] == "batch: 1/2 succeeded"


def test_a_caller_outside_the_cluster_joins_with_ray_client(sandbox_image, scenario_file, tmp_path, cluster):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "ray.util.client.server", f"--address={cluster['address']}",
                               "--host=127.0.0.1", f"--port={port}", "--mode=proxy"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cluster["pids"].add(server.pid)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.3)
        ws = tmp_path / "ws"
        proc = run_cli("run", str(scenario_file([py("print(6 * 7)")], name="client")), "--ray",
                       f"ray://127.0.0.1:{port}", "--json", "--workspace", str(ws))
    finally:
        server.terminate()
        server.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr
    row, batch = [json.loads(line) for line in proc.stdout.splitlines()]
    assert batch["batch"]["runs"] == 1
    assert row["status"] == "success" and row["node_id"] in cluster["nodes"]
    assert load_transcript(row["run_dir"])["status"] == "success" and Path(row["run_dir"]).parent == ws / "client"


def test_a_run_folder_a_node_sent_back_resumes_here(sandbox_image, scenario_file, tmp_path, cluster):
    path = scenario_file([py("open('data.txt', 'w').write('hello')"), "Done. TERMINATE",
                          py("print(open('data.txt').read().upper())"), "TERMINATE"], name="resumable",
                         termination={"contains": "TERMINATE"})
    ws = tmp_path / "ws"
    proc = run_cli("run", str(path), "--ray", cluster["address"], "--json", "--workspace", str(ws))
    assert proc.returncode == 0, proc.stderr
    parent = Path(json.loads(proc.stdout.splitlines()[0])["run_dir"])  # the last line is the batch's
    proc = run_cli("replay", str(parent), "--resume", "--message", "Now print it in upper case.")
    assert proc.returncode == 0, proc.stderr
    (child_dir,) = [d for d in (ws / "resumable").iterdir() if d != parent]
    child = load_transcript(child_dir)
    assert child["parent"]["run_dir"] == str(parent)
    assert "HELLO" in child["messages"][2]["outcome"]["executions"][0]["output"]  # the node's files came back


def test_a_model_no_node_advertises_is_refused_before_anything_runs(scenario_file, tmp_path, cluster):
    needs_llm = scenario_file(["unused"], name="llm", model="local")
    proc = run_cli("run", str(needs_llm), "--ray", cluster["address"], "--workspace", str(tmp_path / "ws"))
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines()[-1].startswith("error: the Ray cluster advertises no 'llm' resource")
    assert not (tmp_path / "ws").exists()


@pytest.mark.parametrize("args,message", [
    (["--ray", "nowhere"], "--ray 'nowhere': give local, auto, ray://host:port or host:port"),
    (["--ray", "auto", "--jobs", "2"], "--jobs sets the sandboxes of --ray local only"),
    (["--ray", "local", "--human", "always"], "--human always asks a person at this terminal"),
])
def test_bad_ray_flags_are_one_line_and_exit_2(scenario_file, tmp_path, args, message):
    proc = run_cli("run", str(scenario_file(["unused"])), *args, "--workspace", str(tmp_path / "ws"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {message}" + proc.stderr.strip().split(message, 1)[1]]
    assert not (tmp_path / "ws").exists()


def test_without_ray_installed_the_error_says_how_to_install_it(scenario_file, tmp_path):
    code = ("import sys, runpy; sys.modules['ray'] = None; sys.argv = sys.argv[1:]; "  # import ray -> ImportError
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code, str(RUN_PY), "run", str(scenario_file(["unused"])),
                           "--ray", "local", "--workspace", str(tmp_path / "ws")],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "250"})
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines() == ["error: --ray needs the 'ray' extra (ray not installed): pip install "
                                                "'codeduet[ray]' (in a checkout: .venv/bin/pip install -e '.[ray]')"]


def test_ctrl_c_on_a_local_ray_batch_stops_its_runs_and_ray(sandbox_image, scenario_file, tmp_path):
    paths = [scenario_file([py("import time\ntime.sleep(60)")], name=f"slow{i}") for i in range(3)]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, str(RUN_PY), "run", *map(str, paths), "--ray", "local", "--jobs", "2",
                             "--workspace", str(tmp_path / "ws")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env={**os.environ, "CODEDUET_RAY_SCRATCH": str(scratch)})
    deadline, pids, running = time.monotonic() + 240, set(), []
    while len(running) < 2 and proc.poll() is None and time.monotonic() < deadline:
        pids = {s["pid"] for s in starts(scratch)}
        running = our_containers(pids)
        time.sleep(0.2)
    assert len(running) == 2, "two sandboxes never ran at once"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted"
    assert our_containers(pids) == []
    deadline = time.monotonic() + 30
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [p for p in pids if alive(p)] == [], "Ray workers were left running"
