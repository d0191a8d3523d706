"""The shipped scenarios: every file loads and validates, its pytest checks exist; the offline demo runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.scenario.checks import PytestCheck
from agents.scenario.spec import load_scenario
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


# -- AG2's own prompt, unchanged ---------------------------------------------------------------------------------
AG2_SCENARIO = ROOT / "scenarios" / "ag2_default_prompt.yaml"


def test_a_system_message_can_name_ag2s_default_prompt_instead_of_copying_it(tmp_path):
    from autogen import AssistantAgent

    from agents.loop.errors import ScenarioError

    assert "from: ag2.default" in AG2_SCENARIO.read_text() and "You are a helpful AI" not in AG2_SCENARIO.read_text()
    scenario = load_scenario(AG2_SCENARIO)
    assert scenario.assistant.system_text == AssistantAgent.DEFAULT_SYSTEM_MESSAGE
    recorded = scenario.snapshot()["assistant"]["system_message"]  # the transcript keeps the text it stood for
    assert recorded == {"from": "ag2.default", "text": AssistantAgent.DEFAULT_SYSTEM_MESSAGE}
    for value, error in [("{from: ag2.nope}", "assistant.system_message: unknown system message 'ag2.nope' (known: "
                                              "ag2.default, or a dotted path like package.module:NAME)"),
                         ("{form: ag2.default}", "assistant.system_message.form: unknown key 'form'"),
                         ("[ag2.default]", "assistant.system_message: use a text, or {from: ag2.default}")]:
        bad = tmp_path / "bad.yaml"
        bad.write_text(f"task: x\nassistant:\n  name: helper\n  system_message: {value}\n")
        with pytest.raises(ScenarioError) as caught:
            load_scenario(bad)
        assert str(caught.value) == f"{bad}:4: {error}"


@pytest.mark.docker
def test_ag2_default_prompt_succeeds_through_the_cli(sandbox_image, tmp_path):
    import json

    from autogen import AssistantAgent

    from tests.helpers import run_cli

    proc = run_cli("run", str(AG2_SCENARIO), "--workspace", str(tmp_path / "ws"), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    t = load_transcript(Path(json.loads(proc.stdout)["run_dir"]))
    assert t["status"] == "success" and t["attempts"][0]["stop_reason"] == "predicate"  # it ended on TERMINATE
    assert t["scenario"]["assistant"]["system_message"]["text"] == AssistantAgent.DEFAULT_SYSTEM_MESSAGE
    runs = t["messages"][2]["outcome"]["executions"]
    assert [(e["filename"], e["language"]) for e in runs] == [("colstats.py", "python"), ("block01.sh", "sh")]
    assert runs[0]["usage"] and runs[1]["command"] == "python colstats.py sales.csv amount"
    assert all(c["passed"] for c in t["messages"][2]["outcome"]["checks"])


@pytest.mark.docker
def test_the_assistant_is_asked_with_ag2s_prompt_itself(sandbox_image, workspaces, monkeypatch):
    from autogen import AssistantAgent

    import agents.loop.run_setup as run_setup

    made = []
    resolve = run_setup.resolve_model
    monkeypatch.setattr(run_setup, "resolve_model", lambda s, o: made.append(resolve(s, o)) or made[-1])
    scenario = load_scenario(AG2_SCENARIO)
    scenario.sandbox.image = sandbox_image
    assert run_scenario(scenario, RunOptions()).status == "success"
    assert made[0].requests[0][0] == {"role": "system", "content": AssistantAgent.DEFAULT_SYSTEM_MESSAGE}
