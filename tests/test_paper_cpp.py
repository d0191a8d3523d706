"""The paper's C/C++ domain (issue 53): benchmarks/paper/cpp/, ten everyday C and C++ tasks (memory bugs to fix, a
string routine, a dynamic array, integer parsing, a ring buffer, a word count, an RAII class, a matrix, bit
tricks), each judged by a hidden test program built with the sanitizers (a C harness, or Catch2 for C++). For
every scenario, its reference reply, sent once by the scripted model, succeeds through run_scenario, and a
do-nothing reply fails. Real containers of the toolchains image."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents.checks import CommandCheck
from agents.conversation import RunOptions, run_scenario
from agents.scenario import Scenario, load_scenario
from tests.conftest import ROOT
from tests.helpers import toolchains_image

SUITE = ROOT / "benchmarks" / "paper" / "cpp"
NAMES = sorted(path.stem for path in SUITE.glob("*.yaml"))
DO_NOTHING = "```python\npass\n```"
FILENAME = re.compile(r"^```(c|cpp)\n// filename: (\S+)$", re.MULTILINE)


def reference(name: str) -> str:
    return (SUITE / "reference" / f"{name}.md").read_text(encoding="utf-8")


def scripted(scenario: Scenario, reply: str) -> Scenario:
    """The scenario as the tests run it: one scripted reply, one attempt, one candidate, one execution."""
    return scenario.model_copy(update={
        "model": {"provider": "scripted", "replies": [reply]},
        "strategy": scenario.strategy.model_copy(update={"attempts": 1, "candidates": 1}),
        "user_proxy": scenario.user_proxy.model_copy(update={"max_consecutive_auto_reply": 1}),
    })


def test_the_suite_has_ten_tasks_about_half_c_and_half_cpp():
    languages = [load_scenario(SUITE / f"{name}.yaml").sandbox.languages for name in NAMES]
    assert len(NAMES) == 10
    assert languages.count(["c"]) == 5 and languages.count(["cpp"]) == 5


@pytest.mark.parametrize("name", NAMES)
def test_each_scenario_loads_for_the_local_model_with_hidden_checks_and_a_reference(name):
    scenario = load_scenario(SUITE / f"{name}.yaml")
    assert scenario.name == name and scenario.model == "local" and scenario.user_proxy.max_consecutive_auto_reply == 5
    assert scenario.checks and all(isinstance(c, CommandCheck) and c.files for c in scenario.checks)
    for check in scenario.checks:
        assert "-fsanitize=address,undefined" in check.command
        for hidden in check.files.values():
            assert hidden.startswith(f"checks/{name}/") or hidden == "checks/paper_check.h"  # the C tests' harness
            assert (SUITE / hidden).is_file()
            assert Path(hidden).name not in scenario.task  # the task states the interface, never the test file
    files = [path for _, path in FILENAME.findall(reference(name))]
    assert files and all(path in scenario.task or path in scenario.files for path in files)


@pytest.fixture(scope="module")
def toolchains() -> str:
    return toolchains_image()


@pytest.mark.docker
@pytest.mark.parametrize("name", NAMES)
def test_the_reference_passes_the_hidden_checks(name, toolchains, workspaces):
    result = run_scenario(scripted(load_scenario(SUITE / f"{name}.yaml"), reference(name)), RunOptions())
    assert result.status == "success", result.reason


@pytest.mark.docker
@pytest.mark.parametrize("name", NAMES)
def test_a_do_nothing_reply_fails(name, toolchains, workspaces):
    result = run_scenario(scripted(load_scenario(SUITE / f"{name}.yaml"), DO_NOTHING), RunOptions())
    assert result.status == "failed", result.reason
