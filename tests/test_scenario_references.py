"""Every local-model scenario is solvable: its reference solution, replayed by the scripted model in the real Docker
sandbox, passes all of the scenario's checks in one turn.

A reference is either scenarios/reference/<name>.py (a script, sent wrapped in one python fence) or
scenarios/reference/<name>.md (the whole assistant reply, sent verbatim: prose and fenced blocks, where a block
whose first line is `# filename: <path>` saves that file in the workspace)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT

SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
REFERENCES = ROOT / "scenarios" / "reference"
KINDS = (".py", ".md")


def references(name: str) -> list[Path]:
    """The reference files of one scenario (a solvable scenario has exactly one)."""
    return [REFERENCES / f"{name}{kind}" for kind in KINDS if (REFERENCES / f"{name}{kind}").is_file()]


WITH_REFERENCE = [p for p in SCENARIOS if references(p.stem)]


def reply_text(reference: Path) -> str:
    """The reply the scripted model sends for a reference file."""
    text = reference.read_text(encoding="utf-8")
    if reference.suffix == ".md":
        assert text.count("```") >= 2 and text.count("```") % 2 == 0, \
            f"{reference.name}: a reply reference needs closed ``` code blocks"
        return text
    assert "```" not in text, "a reference solution cannot hold a code fence: it is sent inside one"
    return "```python\n" + text + "\n```"


def test_every_local_model_scenario_has_a_reference_solution():
    local = [p.stem for p in SCENARIOS if not isinstance(load_scenario(p).model, dict)]
    missing = [name for name in local if not references(name)]
    both = [name for name in local if len(references(name)) > 1]
    assert local, "no local-model scenarios found"
    assert not missing, f"scenarios without scenarios/reference/<name>.py or <name>.md: {missing}"
    assert not both, f"scenarios with both a .py and a .md reference (keep one): {both}"


def test_every_reference_solution_has_a_scenario():
    files = [p for kind in KINDS for p in REFERENCES.glob(f"*{kind}")]
    orphans = sorted(p.name for p in files if not (ROOT / "scenarios" / f"{p.stem}.yaml").is_file())
    assert not orphans, f"reference solutions without a scenario: {orphans}"


@pytest.mark.docker
@pytest.mark.parametrize("path", WITH_REFERENCE, ids=lambda p: p.stem)
def test_reference_solution_passes_the_checks(path: Path, sandbox_image, workspaces):
    scenario = load_scenario(path)
    if not scenario.sandbox.languages:  # with languages: the image built for them (`make test` builds it)
        scenario.sandbox.image = sandbox_image
    inline = {"provider": "scripted", "replies": [reply_text(references(path.stem)[0])]}
    result = run_scenario(scenario, RunOptions(model=inline, workspaces=workspaces, attempts=1))
    assert result.status == "success", result.reason
    assert result.totals["turns"] == 1, f"the reference solution needed {result.totals['turns']} turns, expected 1"
