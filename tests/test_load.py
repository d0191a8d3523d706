"""Load: a batch of 8 scripted scenarios with --jobs 4 leaves 8 run folders, 8 transcripts, no container (the batch of
20 is measured by benchmarks/batch_load.py, docs/BENCHMARKS.md)."""

from __future__ import annotations

import json

import pytest

from benchmarks.batch_load import run_batch, write_scenarios
from tests.conftest import IMAGE
from tests.helpers import containers_under

pytestmark = [pytest.mark.docker, pytest.mark.slow]
RUNS = 8  # twice the jobs: every job slot is taken and reused


def test_batch_of_8_with_4_jobs(sandbox_image, tmp_path):
    paths = write_scenarios(tmp_path / "scenarios", RUNS, IMAGE)
    ws = tmp_path / "ws"
    result = run_batch(paths, 4, ws)
    assert result["exit_code"] == 0, result["stderr_tail"]
    run_dirs = sorted({p.parent for p in ws.glob("*/*/events.jsonl")})
    assert len(run_dirs) == RUNS
    assert sorted(d.parent.name for d in run_dirs) == [f"load{i:02d}" for i in range(RUNS)]
    for d in run_dirs:
        transcript = json.loads((d / "transcript.json").read_text())
        assert transcript["status"] == "success" and transcript["totals"]["executions"] == 2
    containers = {next(json.loads(line)["container"] for line in (d / "events.jsonl").read_text().splitlines()
                       if json.loads(line)["type"] == "sandbox") for d in run_dirs}
    assert len(containers) == RUNS  # one container per run
    assert 1 <= result["peak_containers"] <= 4  # never more sandboxes at once than jobs
    assert result["leftover_containers"] == 0 and containers_under(tmp_path) == []
