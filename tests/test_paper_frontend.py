"""The paper's frontend domain (issue 53): benchmarks/paper/frontend holds ten component tasks (plain pages checked by
a headless browser through `page:` checks, React components under hidden jest tests through `command:` checks).
Every scenario loads, is for the local model and has hidden checks and a reference reply; in the real Docker sandbox
(the toolchains image, which the frontend preset resolves to) the reference passes every check in one turn and a
do-nothing reply fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.check_page import PageCheck
from agents.checks import CommandCheck
from agents.conversation import RunOptions, run_scenario
from agents.scenario import Scenario, load_scenario
from agents.strategy_config import StrategyConfig
from tests.conftest import ROOT
from tests.helpers import toolchains_image

FOLDER = ROOT / "benchmarks" / "paper" / "frontend"
SCENARIOS = sorted(FOLDER.glob("*.yaml"))
NOTHING = "```python\npass\n```"


def reference(path: Path) -> str:
    """The scenario's reference reply (benchmarks/paper/frontend/reference/<name>.md)."""
    return (FOLDER / "reference" / f"{path.stem}.md").read_text(encoding="utf-8")


def scripted(path: Path, reply: str) -> Scenario:
    """The scenario with the scripted model sending this one reply: one attempt, one candidate, one turn."""
    scenario = load_scenario(path)
    scenario.model = {"provider": "scripted", "replies": [reply]}
    scenario.strategy = StrategyConfig(attempts=1, candidates=1)
    scenario.user_proxy.max_consecutive_auto_reply = 1
    return scenario


def test_ten_scenarios_each_local_with_hidden_checks_and_a_reference():
    assert len(SCENARIOS) >= 10, [p.stem for p in SCENARIOS]
    for path in SCENARIOS:
        scenario = load_scenario(path)
        assert scenario.name == path.stem and scenario.model == "local", path.name
        assert scenario.sandbox.preset == "frontend", path.name
        assert scenario.user_proxy.max_consecutive_auto_reply == 5, path.name
        assert scenario.checks, f"{path.name}: no checks"
        for check in scenario.checks:
            assert isinstance(check, PageCheck) or (isinstance(check, CommandCheck) and check.files), \
                f"{path.name}: {check.label()} is neither a page check nor a command with hidden test files"
            for hidden in getattr(check, "files", {}).values():
                assert (FOLDER / hidden).is_file() and hidden.startswith(f"checks/{path.stem}/"), hidden
        text = reference(path)
        assert text.count("```") >= 2 and text.count("```") % 2 == 0, f"{path.stem}: unclosed code block"
        assert "filename:" in text, f"{path.stem}: the reference saves no file"
    orphans = {p.stem for p in (FOLDER / "reference").glob("*.md")} - {p.stem for p in SCENARIOS}
    assert not orphans, f"references without a scenario: {orphans}"


@pytest.fixture(scope="module")
def image() -> str:
    """The toolchains image built (every language and the web preset): the frontend preset resolves to it."""
    return toolchains_image()


@pytest.mark.docker
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_the_reference_passes_in_one_turn(path: Path, image, workspaces):
    result = run_scenario(scripted(path, reference(path)), RunOptions(workspaces=workspaces))
    assert result.status == "success", result.reason
    assert result.totals["turns"] == 1


@pytest.mark.docker
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_a_do_nothing_reply_fails(path: Path, image, workspaces):
    result = run_scenario(scripted(path, NOTHING), RunOptions(workspaces=workspaces))
    assert result.status == "failed", (result.status, result.reason)
