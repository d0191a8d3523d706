"""run.py as a real subprocess: exit codes, the --json summary, the closing line, runs, sandbox status|clean,
batches."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import py
from tests.helpers import ROOT, containers_under, run_cli

pytestmark = pytest.mark.docker

CLOSING = re.compile(r"^run: (?P<dir>\S+) status=(?P<status>\w+)$")


def closing_line(stdout: str) -> re.Match:
    last = stdout.rstrip().splitlines()[-1]
    m = CLOSING.match(last)
    assert m, f"no closing line in: {last!r}"
    return m


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return tmp_path / "ws"


def test_success_exits_0_with_the_closing_line(sandbox_image, scenario_file, ws):
    proc = run_cli("run", str(scenario_file([py("print(6 * 7)")], name="ok")), "--workspace", str(ws))
    assert proc.returncode == 0, proc.stderr
    m = closing_line(proc.stdout)
    assert m["status"] == "success"
    run_dir = Path(m["dir"])
    assert run_dir.parent == ws / "ok" and (run_dir / "transcript.json").is_file()
    assert "42" in proc.stdout  # the conversation was shown


@pytest.mark.parametrize("replies,extra,status", [
    ([py(f"raise SystemExit({i})") for i in (3, 4, 5)], {"user_proxy": {"max_consecutive_auto_reply": 1}},
     "max_replies"),
    ([py("raise SystemExit(3)"), "I give up. TERMINATE"], {"termination": {"contains": "TERMINATE"}}, "failed"),
], ids=["max_replies", "failed"])
def test_a_run_that_does_not_succeed_exits_1(loop_file, ws, replies, extra, status):
    proc = run_cli("run", str(loop_file(replies, name="nope", **extra)), "--workspace", str(ws))
    assert proc.returncode == 1, proc.stderr
    assert closing_line(proc.stdout)["status"] == status


def test_bad_input_exits_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: x\nsandbox:\n  timout: 5\n")
    proc = run_cli("run", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {bad}:3: sandbox.timout: unknown key 'timout'"
    assert proc.stdout == ""


def test_environment_problem_exits_3(scenario_file, tmp_path, ws):
    proc = run_cli("run", str(scenario_file([py("print(1)")])), "--workspace", str(ws), "--json",
                   env={"DOCKER_HOST": f"unix://{tmp_path}/missing.sock"})
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"error: Docker daemon not reachable at unix://{tmp_path}/missing.sock")


def test_json_summary(loop_file, ws):
    proc = run_cli("run", str(loop_file([py("1 / 0"), py("print('fixed')")], name="js")),
                   "--workspace", str(ws), "--json")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1  # nothing but the summary on stdout
    data = json.loads(lines[0])
    assert {"run_dir", "status", "turns", "executions", "tokens", "seconds"} <= set(data)
    assert data["status"] == "success" and data["turns"] == 2 and data["executions"] == 2
    assert isinstance(data["tokens"], int) and isinstance(data["seconds"], float) and data["seconds"] > 0
    assert Path(data["run_dir"]).parent == ws / "js"
    transcript = json.loads((Path(data["run_dir"]) / "transcript.json").read_text())
    assert transcript["status"] == data["status"] and transcript["totals"]["executions"] == 2


def run_json(scenario: Path, ws: Path) -> dict:
    proc = run_cli("run", str(scenario), "--workspace", str(ws), "--json")
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


def test_runs_lists_saved_runs_newest_first_with_their_paths(loop_file, ws):
    """`runs`: newest first (not by scenario name), every id and path whole, -n; through a pipe at 80 columns:
    plain columns with no box (issue 20 items 4-5)."""
    a = run_json(loop_file([py("print(1)")], name="zeta"), ws)
    b = run_json(loop_file([py("raise SystemExit(1)"), py("raise SystemExit(2)")], name="alpha",
                           user_proxy={"max_consecutive_auto_reply": 1}), ws)
    proc = run_cli("runs", "--workspace", str(ws), env={"COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    assert not set("│┃━─") & set(proc.stdout), proc.stdout  # no terminal: no boxes
    rows = [line.split() for line in proc.stdout.splitlines() if re.match(r"\s*\d{8}-\d{6}-", line)]
    assert [r[0] for r in rows] == [Path(b["run_dir"]).name, Path(a["run_dir"]).name]  # newest first
    assert rows[0][1:3] == ["alpha", "max_replies"] and rows[1][1:3] == ["zeta", "success"]
    assert rows[0][-1] == b["run_dir"] and rows[1][-1] == a["run_dir"]  # the path, whole
    newest = run_cli("runs", "--workspace", str(ws), "-n", "1")
    assert Path(b["run_dir"]).name in newest.stdout and Path(a["run_dir"]).name not in newest.stdout
    only = run_cli("runs", "zeta", "--workspace", str(ws))
    assert Path(a["run_dir"]).name in only.stdout and Path(b["run_dir"]).name not in only.stdout
    empty = run_cli("runs", "--workspace", str(ws / "nothing"))
    assert empty.returncode == 0 and "no runs under" in empty.stdout


def test_replay_takes_a_run_id_a_prefix_a_scenario_or_latest(loop_file, ws):
    """What `runs` shows, `replay` accepts: a run id, a unique prefix, a scenario folder, name or file (its newest
    run), latest / -1 / -2; an ambiguous prefix or an unknown id is one line and exit 2 (issue 20 item 5)."""
    first_file = loop_file([py("print('first')")], name="first")
    old = run_json(first_file, ws)["run_dir"]
    new = run_json(first_file, ws)["run_dir"]
    other = run_json(loop_file([py("print('other')")], name="other"), ws)["run_dir"]

    def replayed(target: str) -> str:
        proc = run_cli("replay", target, "--workspace", str(ws))
        assert proc.returncode == 0, (target, proc.stderr)
        return next(line.split()[-1] for line in proc.stdout.splitlines() if line.startswith("run "))

    assert replayed(Path(old).name) == old
    assert replayed(Path(old).name[:-2]) == old
    assert replayed(str(ws / "first")) == new and replayed("first") == new and replayed(str(first_file)) == new
    assert replayed("latest") == other and replayed("-1") == other and replayed("-2") == new
    assert replayed(old) == old and replayed(f"{old}/transcript.json") == old
    for bad, says in (("2", "runs under"), ("nosuchrun", "no such run folder"), ("-9", "3 saved run(s)")):
        proc = run_cli("replay", bad, "--workspace", str(ws))
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith(f"error: {bad}: ") and says in proc.stderr, proc.stderr


def test_sandbox_status(sandbox_image):
    proc = run_cli("sandbox", "status", "--image", sandbox_image)
    assert proc.returncode == 0, proc.stderr
    assert "docker: reachable" in proc.stdout
    assert f"image: {sandbox_image} present" in proc.stdout
    limits = next(line for line in proc.stdout.splitlines() if line.startswith("limits"))
    user = "user=1000:1000" if os.geteuid() == 0 else f"user={os.getuid()}:{os.getgid()}"
    for item in ("network_mode=none", "read_only=True", "cap_drop=['ALL']", "security_opt=['no-new-privileges']",
                 "pids_limit=128", "mem_limit=512m", user):
        assert item in limits, limits
    assert re.search(r"containers: \d+ codeduet container\(s\) present", proc.stdout)
    missing = run_cli("sandbox", "status", "--image", "codeduet-no-such-image:v0")
    assert missing.returncode == 3
    assert "image: codeduet-no-such-image:v0 missing: run `codeduet sandbox build`" in missing.stdout


ORPHAN = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from agents.sandbox.docker_executor import DockerExecutor
    from agents.sandbox.config import SandboxConfig
    ex = DockerExecutor(SandboxConfig(image={image!r}), Path({ws!r}))
    ex.start()
    print(ex.container.name, flush=True)
    ex.reaper.proc.kill()  # its watchdog dies first (as in a reboot or the OOM killer)...
    ex.reaper.proc.wait()
    os._exit(0)  # ...then it dies without stop(): the container is orphaned
""")


@pytest.mark.serial  # `sandbox clean` removes every orphan, other tests' too
def test_sandbox_clean_removes_orphans(sandbox_image, tmp_path):
    script = ORPHAN.format(root=str(ROOT), image=sandbox_image, ws=str(tmp_path / "orphan-ws"))
    name = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert containers_under(tmp_path) == [name]
    proc = run_cli("sandbox", "clean")
    assert proc.returncode == 0, proc.stderr
    assert re.search(rf"removed \d+ container\(s\): .*{name}", proc.stdout), proc.stdout
    assert containers_under(tmp_path) == []


def test_batch_prints_a_summary_table(loop_file, ws):
    good = loop_file([py("print('good')")], name="good")
    bad = loop_file([py("raise SystemExit(2)"), py("raise SystemExit(3)")], name="bad",
                    user_proxy={"max_consecutive_auto_reply": 1})
    proc = run_cli("run", str(good), str(bad), "--jobs", "2", "--workspace", str(ws))
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "batch summary" in out
    table = [line.split() for line in out.splitlines() if len(line.split()) == 7]  # no terminal: plain columns
    assert any(row[0].endswith("good.yaml") and row[1] == "success" for row in table), out
    assert any(row[0].endswith("bad.yaml") and row[1] == "max_replies" for row in table), out
    assert out.rstrip().splitlines()[-1] == "batch: 1/2 succeeded"
    assert len(list(ws.glob("*/*/transcript.json"))) == 2


def test_batch_json_is_one_summary_line_per_scenario(loop_file, ws):
    good = loop_file([py("print('good')")], name="good")
    bad = loop_file([py("raise SystemExit(2)")], name="bad", user_proxy={"max_consecutive_auto_reply": 0})
    proc = run_cli("run", str(good), str(bad), "--jobs", "2", "--json", "--workspace", str(ws))
    assert proc.returncode == 1, proc.stderr
    *rows, batch = [json.loads(line) for line in proc.stdout.splitlines()]  # nothing else on stdout: no table
    assert [(Path(r["scenario"]).name, r["status"], r["exit_code"]) for r in rows] == [
        ("good.yaml", "success", 0), ("bad.yaml", "max_replies", 1)]
    assert batch["batch"]["runs"] == 2 and batch["batch"]["execution_success_rate"] == 0.5
    assert batch["batch"]["single_pass_success_rate"] == 0.5 and batch["batch"]["execution_stability_rate"] == 0.5
    assert rows[1]["metrics"] == {"setup": "pair", "success": False, "first_lines": 1, "final_ran": False,
                                  "abnormal": False, "first_passed": False, "refinements": 0,
                                  "initial_errors": 1, "final_errors": 1, "executions": 1, "clean_executions": 0}
    assert batch["batch"]["paper_execution_success_rate"] == 0.5 and batch["batch"]["initial_errors_per_line"] == 0.5
    assert batch["batch"]["runs_within_limits"] == 1.0
    assert all(Path(r["run_dir"]).parent.parent == ws and r["executions"] == 1 for r in rows)


def test_batch_with_a_bad_file_runs_nothing(scenario_file, tmp_path, ws):
    good = scenario_file([py("print('good')")], name="good")
    bad = tmp_path / "broken.yaml"
    bad.write_text("task: [unclosed\n")
    proc = run_cli("run", str(good), str(bad), "--workspace", str(ws))
    assert proc.returncode == 2
    assert f"error: {bad}:2: YAML syntax error" in proc.stderr
    assert not ws.exists()


@pytest.mark.parametrize("how", ["--human always", "--human terminate", "scenario asks"])
def test_a_batch_that_asks_a_person_is_refused_before_anything_runs(loop_file, ws, how):
    """A person steers one run at a time: a batch with --human always|terminate (or a scenario whose
    human_input_mode asks) is one line and exit 2, before any container or run folder (issue 20 item 3)."""
    asks = how == "scenario asks"
    first = loop_file([py("print(1)")], name="one")
    second = loop_file([py("print(2)")], name="two",
                       **({"user_proxy": {"human_input_mode": "ALWAYS"}} if asks else {}))
    flags = [] if asks else how.split()
    proc = run_cli("run", str(first), str(second), "--jobs", "2", *flags, "--workspace", str(ws), timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "a batch runs unattended" in lines[0], proc.stderr
    assert (f"{second}: human_input_mode ALWAYS" in lines[0]) if asks else (how in lines[0])
    assert not ws.exists()
    if asks:  # a person can still batch them unattended, even a scenario that asks (one batch run is enough)
        never = run_cli("run", str(first), str(second), "--human", "never", "--workspace", str(ws), "--json")
        assert never.returncode == 0, never.stderr


def test_a_bridge_network_warns_on_every_run_and_is_recorded(sandbox_image, scenario_file, ws):
    """sandbox.network: bridge gives the code the network: the header says so, every run warns, the transcript
    records it and replay shows it (issue 20 item 6). The default (none) says nothing."""
    path = scenario_file([py("print(6 * 7)")], name="bridged", sandbox={"network": "bridge"})
    for _ in range(2):
        proc = run_cli("run", str(path), "--workspace", str(ws))
        assert proc.returncode == 0, proc.stderr
        assert "sandbox docker network bridge" in proc.stdout
        assert "warning: sandbox.network: bridge gives LLM-written code Docker's network" in proc.stdout
    quiet = run_json(scenario_file([py("print(1)")], name="closed"), ws)
    t = json.loads((Path(quiet["run_dir"]) / "transcript.json").read_text())
    assert t["sandbox"]["network"] == "none" and t["warnings"] == []
    as_json = run_cli("run", str(path), "--workspace", str(ws), "--json")
    assert "warning: sandbox.network: bridge" in as_json.stderr  # stdout stays one JSON line
    run_dir = Path(json.loads(as_json.stdout)["run_dir"])
    t = json.loads((run_dir / "transcript.json").read_text())
    assert t["sandbox"]["network"] == "bridge" and t["warnings"][0].startswith("sandbox.network: bridge gives")
    shown = run_cli("replay", str(run_dir))
    assert "network bridge" in shown.stdout and "warning      sandbox.network: bridge" in shown.stdout
