"""The real local model in the real Docker sandbox, end to end (marked `model`: runs in CI)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agents.conversation import RunOptions, run_scenario
from agents.scenario import load_scenario
from agents.transcript import STATUSES, load_transcript
from tests.conftest import ROOT

pytestmark = [pytest.mark.model, pytest.mark.docker, pytest.mark.slow]


def test_primes_with_the_local_model(sandbox_image, workspaces):
    """What must hold whatever the model writes: the run ends, code ran in the sandbox, all is recorded."""
    scenario = load_scenario(ROOT / "scenarios" / "primes.yaml")
    result = run_scenario(scenario, RunOptions(model="local"))
    data = load_transcript(result.run_dir)
    assert data["status"] in STATUSES and data["status"] != "error", data["reason"]
    assert data["model"]["provider"] == "llama_cpp"
    assistant = [m for m in data["messages"] if m["role"] == "assistant"]
    assert assistant and all(m.get("usage", {}).get("completion_tokens", 0) > 0 for m in assistant)
    assert data["totals"]["executions"] >= 1
    assert any((result.run_dir / "workspace").glob("block*.py"))


def test_main_job_command_as_a_user_runs_it(sandbox_image, workspaces):
    """`python run.py run scenarios/primes.yaml --json` as a real subprocess, with the default model."""
    proc = subprocess.run([sys.executable, "run.py", "run", "scenarios/primes.yaml", "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == (0 if summary["status"] == "success" else 1), proc.stderr
    assert summary["executions"] >= 1 and summary["tokens"] > 0
    assert load_transcript(summary["run_dir"])["model"]["name"] == "local"
