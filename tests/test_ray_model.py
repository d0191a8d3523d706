"""`--ray local` with the real local model: the task holds the node's `llm` slot and uses the node's model."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agents.loop.status import STATUSES
from agents.record.transcript import load_transcript
from tests.conftest import ROOT

pytest.importorskip("ray", reason="the optional extra codeduet[ray] is not installed")
pytestmark = [pytest.mark.model, pytest.mark.docker, pytest.mark.slow]


def test_a_local_model_scenario_runs_as_a_ray_task(sandbox_image, tmp_path):
    ws = tmp_path / "ws"
    proc = subprocess.run([sys.executable, "run.py", "run", "scenarios/primes.yaml", "--ray", "local", "--json",
                           "--workspace", str(ws)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    row, batch = [json.loads(line) for line in proc.stdout.splitlines()]
    assert batch["batch"]["runs"] == 1
    assert proc.returncode == (0 if row["status"] == "success" else 1), proc.stderr
    assert row["ray_attempt"] == 1 and row["node_id"] and row["tokens"] > 0 and row["executions"] >= 1
    data = load_transcript(row["run_dir"])
    assert data["status"] in STATUSES and data["status"] != "error", data["reason"]
    assert data["model"]["name"] == "local" and data["model"]["provider"] == "llama_cpp"
    assert data["run_dir"] == row["run_dir"] and data["recorded_run_dir"] != row["run_dir"]  # made on the node
