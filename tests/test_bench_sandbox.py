"""Smoke test of `bench sandbox`: every method runs both blocks in the real sandbox (no timing asserts)."""

from __future__ import annotations

import io
import json
import os

import pytest
from rich.console import Console

from agents.bench import sandbox_overhead
from agents.bench.sandbox_overhead import BLOCKS, METHODS

pytestmark = pytest.mark.docker


def test_every_method_runs_and_the_report_is_written(sandbox_image, tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox_overhead, "WARMUP", 0)
    console = Console(file=io.StringIO(), width=120)
    assert sandbox_overhead.main(console, n=2, out=tmp_path) == 0
    report = json.loads((tmp_path / "sandbox_overhead.json").read_text())
    for block in BLOCKS:
        methods = report["results"][block]["methods"]
        assert set(methods) == set(METHODS)
        assert all(m["n"] == 2 and m["median_ms"] > 0 for m in methods.values())
        assert {"executor_over_docker_exec", "docker_run_over_executor"} <= set(report["results"][block]["ratios"])
    assert report["machine"]["cores"] >= 1
    text = console.file.getvalue()
    assert "ratio 1/2" in text and "docker run --rm" in text


def test_no_container_is_left_behind(sandbox_image, tmp_path, monkeypatch):
    from agents.sandbox.image import docker_client

    monkeypatch.setattr(sandbox_overhead, "WARMUP", 0)
    sandbox_overhead.main(Console(file=io.StringIO()), n=1, out=tmp_path)
    ours = docker_client().containers.list(all=True, filters={"label": f"org.codeduet.pid={os.getpid()}"})
    assert ours == []
