"""Load: a batch of 20 scripted scenarios with --jobs 4 leaves 20 run folders, 20 transcripts, no container."""

from __future__ import annotations

import json

import pytest

from benchmarks.batch_load import run_batch, write_scenarios
from tests.conftest import IMAGE
from tests.helpers import containers_under

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_batch_of_20_with_4_jobs(sandbox_image, tmp_path):
    paths = write_scenarios(tmp_path / "scenarios", 20, IMAGE)
    ws = tmp_path / "ws"
    result = run_batch(paths, 4, ws)
    assert result["exit_code"] == 0, result["stderr_tail"]
    run_dirs = sorted({p.parent for p in ws.glob("*/*/events.jsonl")})
    assert len(run_dirs) == 20
    assert sorted(d.parent.name for d in run_dirs) == [f"load{i:02d}" for i in range(20)]
    for d in run_dirs:
        transcript = json.loads((d / "transcript.json").read_text())
        assert transcript["status"] == "success" and transcript["totals"]["executions"] == 2
    containers = {next(json.loads(line)["container"] for line in (d / "events.jsonl").read_text().splitlines()
                       if json.loads(line)["type"] == "sandbox") for d in run_dirs}
    assert len(containers) == 20  # one container per run
    assert 1 <= result["peak_containers"] <= 4  # never more sandboxes at once than jobs
    assert result["leftover_containers"] == 0 and containers_under(tmp_path) == []
