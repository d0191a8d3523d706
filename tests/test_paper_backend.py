"""The paper's backend domain (issue 53): ten everyday service tasks in benchmarks/paper/backend/ (Flask and
FastAPI over sqlite3, express, Go net/http), each with hidden checks (`http:` requests, hidden pytest test-client
tests through `command:`) and a reference reply in benchmarks/paper/backend/reference/<name>.md. Through the
product's run_scenario in real Docker (the toolchains image), each reference, sent by the scripted model, passes
every check in one turn, and a do-nothing reply fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.check_http import HttpCheck
from agents.checks import CommandCheck
from agents.conversation import RunOptions, run_scenario
from agents.scenario import Scenario, load_scenario
from agents.transcript import load_transcript
from tests.conftest import ROOT
from tests.helpers import toolchains_image

SUITE = ROOT / "benchmarks" / "paper" / "backend"
SCENARIOS = sorted(SUITE.glob("*.yaml"))
DO_NOTHING = "```python\npass\n```"


def reference(path: Path) -> str:
    """The reference reply of a scenario, sent verbatim (prose and fenced blocks)."""
    text = (SUITE / "reference" / f"{path.stem}.md").read_text(encoding="utf-8")
    assert text.count("```") >= 2 and text.count("```") % 2 == 0, f"{path.stem}: unclosed code block"
    return text


def scripted(path: Path, reply: str) -> Scenario:
    """The scenario with the scripted model sending `reply` once: one attempt, one candidate, one turn."""
    scenario = load_scenario(path)
    scenario.model = {"provider": "scripted", "replies": [reply]}
    scenario.strategy.attempts = 1
    scenario.strategy.candidates = 1
    scenario.user_proxy.max_consecutive_auto_reply = 1
    return scenario


def failed_checks(result) -> str:
    """The details of the checks that failed in a run (for an assertion's message)."""
    messages = load_transcript(result.run_dir)["messages"]
    checks = [c for m in messages if m["role"] == "execution" for c in m["outcome"]["checks"]]
    return "\n".join(f"{c['name']}: {c['detail']}" for c in checks if not c["passed"]) or result.reason


def test_the_suite_has_ten_local_model_scenarios_with_hidden_checks_and_references():
    assert len(SCENARIOS) >= 10, [p.stem for p in SCENARIOS]
    for path in SCENARIOS:
        scenario = load_scenario(path)
        assert scenario.name == path.stem and scenario.model == "local", path.stem
        assert scenario.sandbox.preset == "backend", path.stem
        assert scenario.user_proxy.max_consecutive_auto_reply == 5, path.stem
        assert any(isinstance(check, HttpCheck) for check in scenario.checks), f"{path.stem}: no http check"
        for check in scenario.checks:
            assert isinstance(check, (HttpCheck, CommandCheck)), f"{path.stem}: {check.label()}"
            for hidden in getattr(check, "files", {}).values():  # hidden tests beside the scenario, its own folder
                assert (SUITE / hidden).is_file() and hidden.startswith(f"checks/{path.stem}/"), hidden
        assert "filename:" in reference(path), f"{path.stem}: the reference saves no file"
    orphans = {p.stem for p in (SUITE / "reference").glob("*.md")} - {p.stem for p in SCENARIOS}
    assert not orphans, f"references without a scenario: {orphans}"


@pytest.fixture(scope="module")
def toolchains() -> str:
    """The toolchains image the backend preset resolves to (built when missing)."""
    return toolchains_image()


@pytest.mark.docker
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_reference_passes_every_check_in_one_turn(path: Path, toolchains, workspaces):
    result = run_scenario(scripted(path, reference(path)), RunOptions(workspaces=workspaces))
    assert result.status == "success", failed_checks(result)
    assert result.totals["turns"] == 1


@pytest.mark.docker
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_a_do_nothing_reply_fails(path: Path, toolchains, workspaces):
    result = run_scenario(scripted(path, DO_NOTHING), RunOptions(workspaces=workspaces))
    assert result.status == "failed", (result.status, result.reason)
