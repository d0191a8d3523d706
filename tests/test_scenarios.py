"""The shipped scenarios: every file loads and validates, its pytest checks exist; the offline demo runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.conversation import RunOptions, run_scenario
from agents.scenario import PytestCheck, load_scenario
from agents.transcript import load_transcript
from tests.conftest import ROOT

SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))


def test_there_are_enough_realistic_scenarios():
    names = {p.stem for p in SCENARIOS}
    assert {"hello_scripted", "primes"} <= names
    local = [p for p in SCENARIOS if not isinstance(load_scenario(p).model, dict)]
    assert len(local) >= 10, "at least 10 realistic scenarios run with the configured (local) model"


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario_loads_and_validates(path: Path):
    scenario = load_scenario(path)
    assert scenario.name == path.stem
    assert scenario.description, "every shipped scenario has a one-line description"
    assert scenario.checks, "every shipped scenario has acceptance checks"
    assert scenario.sandbox.kind == "docker"


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_pytest_check_files_exist(path: Path):
    scenario = load_scenario(path)
    for check in scenario.checks:
        if isinstance(check, PytestCheck):
            target = path.parent / check.pytest
            assert target.is_file(), f"{path.name}: {check.pytest} is missing"
            compile(target.read_text(), str(target), "exec")


def test_every_check_file_is_used():
    used = {(p.parent / c.pytest).resolve() for p in SCENARIOS for c in load_scenario(p).checks
            if isinstance(c, PytestCheck)}
    files = {f.resolve() for f in (ROOT / "scenarios" / "checks").glob("test_*.py")}
    assert files <= used, f"unused check files: {sorted(str(f) for f in files - used)}"


def test_primes_is_the_readme_main_job():
    scenario = load_scenario(ROOT / "scenarios" / "primes.yaml")
    assert scenario.model is None  # the default model from configs/llm.yaml: the embedded local one
    assert any(getattr(c, "stdout_contains", None) == "49345379" for c in scenario.checks)


@pytest.mark.docker
def test_hello_scripted_runs_end_to_end(sandbox_image, workspaces):
    scenario = load_scenario(ROOT / "scenarios" / "hello_scripted.yaml")
    scenario.sandbox.image = sandbox_image
    result = run_scenario(scenario, RunOptions())
    assert result.status == "success", result.reason
    messages = load_transcript(result.run_dir)["messages"]
    assert [m["role"] for m in messages] == ["task", "assistant", "execution", "assistant", "execution"]
    assert "ZeroDivisionError" in messages[2]["content"]
    assert "49345379" in messages[4]["content"]
    assert result.totals["turns"] == 2 and result.totals["failed_executions"] == 1
