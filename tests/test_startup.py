"""Startup: commands that run no conversation never import AG2 (`autogen`), checked in a fresh `codeduet` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import py
from tests.helpers import ROOT, run_cli

HEAVY = ("autogen", "openai", "docker", "llama_cpp")
PROBE = """\
import json, sys
from agents.cli.app import app
try:
    app(sys.argv[1:], prog_name="codeduet")
    code = 0
except SystemExit as exc:
    code = exc.code
print("PROBE " + json.dumps({"exit": code, "loaded": [m for m in %r if m in sys.modules]}), file=sys.stderr)
""" % (HEAVY,)


def probe(*args: str, ws: Path) -> dict:
    """Run the real typer app in a fresh interpreter with these arguments; its exit code and the heavy modules it
    imported."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "CODEDUET_WORKSPACES": str(ws), "COLUMNS": "200"})
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("PROBE ")]
    assert line, proc.stderr
    return json.loads(line[-1].removeprefix("PROBE "))


@pytest.fixture(scope="module")
def a_run(sandbox_image, tmp_path_factory) -> tuple[Path, Path]:
    """(workspaces root, run folder) of one scripted run in the real sandbox."""
    tmp = tmp_path_factory.mktemp("startup")
    scenario = tmp / "s.yaml"
    scenario.write_text(json.dumps({"name": "s", "task": "Print 42.", "strategy": {"attempts": 1},
                                    "model": {"provider": "scripted", "replies": [py("print(42)")]}}))
    proc = run_cli("run", str(scenario), "--json", "--workspace", str(tmp / "ws"))
    assert proc.returncode == 0, proc.stderr
    return tmp / "ws", Path(json.loads(proc.stdout.splitlines()[-1])["run_dir"])


def test_help_imports_no_ag2(tmp_path):
    assert probe("--help", ws=tmp_path) == {"exit": 0, "loaded": []}


def test_help_imports_no_pydantic_either():
    """`--help` loads the sub-commands' modules (sandbox/cli.py and the like), never a config model."""
    code = "import sys\nfrom agents.cli.app import app\nprint('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.docker
@pytest.mark.parametrize("args", [["runs"], ["replay", "RUN"], ["replay", "RUN", "--html", "page.html"]],
                         ids=["runs", "replay", "replay-html"])
def test_reading_runs_imports_no_ag2(a_run, tmp_path, args):
    ws, run_dir = a_run
    args = [str(run_dir) if a == "RUN" else str(tmp_path / a) if a.endswith(".html") else a for a in args]
    result = probe(*args, ws=ws)
    assert result["exit"] == 0 and "autogen" not in result["loaded"], result


@pytest.mark.parametrize("args", [["run", "BAD"], ["run", "GOOD", "--human", "sometimes"]], ids=["yaml", "flag"])
def test_bad_run_input_is_refused_before_ag2_is_imported(tmp_path, args):
    (tmp_path / "bad.yaml").write_text("task: [\n")
    (tmp_path / "good.yaml").write_text("task: Print 42.\n")
    args = [str(tmp_path / "bad.yaml") if a == "BAD" else str(tmp_path / "good.yaml") if a == "GOOD" else a
            for a in args]
    assert probe(*args, ws=tmp_path) == {"exit": 2, "loaded": []}


@pytest.mark.docker
def test_replay_execute_runs_the_sandbox_without_ag2(a_run):
    ws, run_dir = a_run
    result = probe("replay", str(run_dir), "--execute", ws=ws)
    assert result["exit"] == 0
    assert "docker" in result["loaded"] and "autogen" not in result["loaded"], result


@pytest.mark.docker
def test_a_conversation_does_import_ag2(sandbox_image, tmp_path):
    """The probe sees AG2 when a conversation runs (so the tests above could fail)."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(json.dumps({"name": "s", "task": "Print 42.", "strategy": {"attempts": 1},
                                    "model": {"provider": "scripted", "replies": [py("print(42)")]}}))
    result = probe("run", str(scenario), ws=tmp_path / "ws")
    assert result["exit"] == 0 and "autogen" in result["loaded"], result


@pytest.mark.docker
def test_bench_startup_times_every_command(sandbox_image, tmp_path):
    from agents.bench.startup import commands

    proc = run_cli("bench", "startup", "--n", "3", "--out", str(tmp_path / "startup.json"))
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "startup.json").read_text())["results"]
    assert set(results) == set(commands(Path("RUN")))
    assert all(r["n"] == 3 and r["min_ms"] <= r["median_ms"] <= r["max_ms"] for r in results.values())
    assert "codeduet replay RUN --execute" in proc.stdout and "python -c pass" in proc.stdout
