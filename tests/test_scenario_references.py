"""Every local-model scenario is solvable: its reference solution (scenarios/reference/<name>.py), replayed by
the scripted model in the real Docker sandbox, passes all of the scenario's checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.conversation import RunOptions, run_scenario
from agents.scenario import load_scenario
from tests.conftest import ROOT

SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
REFERENCES = ROOT / "scenarios" / "reference"
WITH_REFERENCE = [p for p in SCENARIOS if (REFERENCES / f"{p.stem}.py").is_file()]


def test_every_local_model_scenario_has_a_reference_solution():
    local = [p.stem for p in SCENARIOS if not isinstance(load_scenario(p).model, dict)]
    missing = [name for name in local if not (REFERENCES / f"{name}.py").is_file()]
    assert local, "no local-model scenarios found"
    assert not missing, f"scenarios without scenarios/reference/<name>.py: {missing}"


def test_every_reference_solution_has_a_scenario():
    orphans = sorted(p.name for p in REFERENCES.glob("*.py") if not (ROOT / "scenarios" / f"{p.stem}.yaml").is_file())
    assert not orphans, f"reference solutions without a scenario: {orphans}"


@pytest.mark.docker
@pytest.mark.parametrize("path", WITH_REFERENCE, ids=lambda p: p.stem)
def test_reference_solution_passes_the_checks(path: Path, sandbox_image, workspaces):
    scenario = load_scenario(path)
    scenario.sandbox.image = sandbox_image
    ref_code = (REFERENCES / f"{path.stem}.py").read_text(encoding="utf-8")
    assert "```" not in ref_code, "a reference solution cannot hold a code fence: it is sent inside one"
    inline = {"provider": "scripted", "replies": ["```python\n" + ref_code + "\n```"]}
    result = run_scenario(scenario, RunOptions(model=inline, workspaces=workspaces, attempts=1))
    assert result.status == "success", result.reason
    assert result.totals["turns"] == 1, f"the reference solution needed {result.totals['turns']} turns, expected 1"
