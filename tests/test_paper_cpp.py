"""The paper's C/C++ domain (issue 53): benchmarks/paper/cpp/, ten everyday C and C++ tasks (memory bugs to fix, a
string routine, a dynamic array, integer parsing, a ring buffer, a word count, an RAII class, a matrix, bit
tricks), each judged by a hidden test program built with the sanitizers (a C harness, or Catch2 for C++): what is
particular to this domain. tests/test_paper_suite.py runs every reference and a do-nothing reply in Docker."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents.scenario.checks import CommandCheck
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT

SUITE = ROOT / "benchmarks" / "paper" / "cpp"
NAMES = sorted(path.stem for path in SUITE.glob("*.yaml"))
FILENAME = re.compile(r"^```(c|cpp)\n// filename: (\S+)$", re.MULTILINE)


def reference(name: str) -> str:
    return (SUITE / "reference" / f"{name}.md").read_text(encoding="utf-8")


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
