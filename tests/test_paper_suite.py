"""The paper's three domains (issue 53) as scenarios in benchmarks/paper/<domain>/: backend services (`http:`
checks, hidden test-client tests), frontend components (`page:` checks, hidden jest tests) and C/C++ programs
(hidden test programs built with the sanitizers). Each is a `model: local` scenario with hidden checks only and a
reference reply in benchmarks/paper/<domain>/reference/<name>.md. Through the product's run_scenario in real
Docker (the toolchains image, which every preset and language set resolves to), each reference, sent by the
scripted model, passes every check in one turn, and a do-nothing reply fails."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.scenario.check_http import HttpCheck
from agents.scenario.check_page import PageCheck
from agents.scenario.checks import CommandCheck
from agents.scenario.spec import Scenario, load_scenario
from tests.conftest import ROOT
from tests.helpers import toolchains_image

PAPER = ROOT / "benchmarks" / "paper"
DO_NOTHING = "```python\npass\n```"


def hidden_tests(check: object) -> bool:
    """A command check that brings hidden test files of its own."""
    return isinstance(check, CommandCheck) and bool(check.files)


DOMAINS: dict[str, tuple[Callable[[Scenario], bool], Callable[[object], bool]]] = {
    "backend": (lambda s: s.sandbox.preset == "backend",
                lambda c: isinstance(c, HttpCheck) or isinstance(c, CommandCheck)),
    "frontend": (lambda s: s.sandbox.preset == "frontend", lambda c: isinstance(c, PageCheck) or hidden_tests(c)),
    "cpp": (lambda s: bool({"c", "cpp"} & set(s.sandbox.languages)), hidden_tests),
}
"""Each domain: what its sandbox must be, and what each of its checks may be."""
SCENARIOS = [(domain, path) for domain in DOMAINS for path in sorted((PAPER / domain).glob("*.yaml"))]


def reference(domain: str, path: Path) -> str:
    """The scenario's reference reply, sent verbatim (prose and fenced blocks)."""
    return (PAPER / domain / "reference" / f"{path.stem}.md").read_text(encoding="utf-8")


def scripted(path: Path, reply: str) -> Scenario:
    """The scenario with the scripted model sending this one reply: one attempt, one candidate, one turn."""
    scenario = load_scenario(path)
    return scenario.model_copy(update={
        "model": {"provider": "scripted", "replies": [reply]},
        "strategy": scenario.strategy.model_copy(update={"attempts": 1, "candidates": 1}),
        "user_proxy": scenario.user_proxy.model_copy(update={"max_consecutive_auto_reply": 1})})


def failed_checks(result) -> str:
    """The details of the checks that failed in a run (an assertion's message)."""
    messages = load_transcript(result.run_dir)["messages"]
    checks = [c for m in messages if m["role"] == "execution" for c in m["outcome"]["checks"]]
    return "\n".join(f"{c['name']}: {c['detail']}" for c in checks if not c["passed"]) or result.reason


@pytest.mark.parametrize("domain", DOMAINS)
def test_each_domain_has_ten_local_model_tasks_with_hidden_checks_and_references(domain):
    sandbox_ok, check_ok = DOMAINS[domain]
    folder = PAPER / domain
    paths = sorted(folder.glob("*.yaml"))
    assert len(paths) >= 10, [p.stem for p in paths]
    for path in paths:
        scenario = load_scenario(path)
        assert scenario.name == path.stem and scenario.model == "local", path.stem
        assert sandbox_ok(scenario) and scenario.user_proxy.max_consecutive_auto_reply == 5, path.stem
        assert scenario.checks, f"{path.stem}: no checks"
        for check in scenario.checks:
            assert check_ok(check), f"{path.stem}: {check.label()}"
            for hidden in getattr(check, "files", {}).values():  # hidden tests (and a shared harness) under checks/
                assert (folder / hidden).exists() and hidden.startswith("checks/"), hidden
        text = reference(domain, path)
        assert text.count("```") >= 2 and text.count("```") % 2 == 0, f"{path.stem}: unclosed code block"
        assert "filename:" in text, f"{path.stem}: the reference saves no file"
    orphans = {p.stem for p in (folder / "reference").glob("*.md")} - {p.stem for p in paths}
    assert not orphans, f"references without a scenario: {orphans}"


@pytest.fixture(scope="module")
def toolchains() -> str:
    """The toolchains image with the web preset, which every scenario here resolves to (built when missing)."""
    return toolchains_image()


@pytest.mark.docker
@pytest.mark.parametrize("domain, path", SCENARIOS, ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_the_reference_passes_every_check_in_one_turn(domain, path: Path, toolchains, workspaces):
    result = run_scenario(scripted(path, reference(domain, path)), RunOptions(workspaces=workspaces))
    assert result.status == "success", failed_checks(result)
    assert result.totals["turns"] == 1


@pytest.mark.docker
@pytest.mark.parametrize("domain, path", SCENARIOS, ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_a_do_nothing_reply_fails(domain, path: Path, toolchains, workspaces):
    result = run_scenario(scripted(path, DO_NOTHING), RunOptions(workspaces=workspaces))
    assert result.status == "failed", (result.status, result.reason)
