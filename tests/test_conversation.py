"""The core loop: real AG2 agents, the scripted model in place of the LLM, and the local executor (no container, so
these run in `make check`); the last tests run the same loop in the real Docker sandbox."""

from __future__ import annotations

import json

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import FORMAT, load_transcript
from agents.scenario.spec import load_scenario
from tests.conftest import py


def run(path, **opts):
    return run_scenario(load_scenario(path), RunOptions(**opts))


def messages(result):
    return load_transcript(result.run_dir)["messages"]


def test_success_at_once_ends_without_extra_llm_turn(workspaces, loop_file):
    result = run(loop_file([py("print(6 * 7)"), "should never be asked for"]))
    assert result.status == "success"
    msgs = messages(result)
    assert [m["role"] for m in msgs] == ["task", "assistant", "execution"]
    assert msgs[2]["outcome"]["executions"][0]["exit_code"] == 0
    assert "42" in msgs[2]["outcome"]["executions"][0]["output"]
    assert (result.run_dir / "workspace" / "block01.py").read_text().strip() == "print(6 * 7)"


def test_failure_then_fix_traceback_reaches_assistant(workspaces, loop_file):
    result = run(loop_file([py("x = 1\nprint(x / 0)"), py("print(1)")]))
    assert result.status == "success"
    msgs = messages(result)
    first_report = msgs[2]
    assert first_report["role"] == "execution"
    assert first_report["outcome"]["executions"][0]["exit_code"] == 1
    assert "ZeroDivisionError" in first_report["content"]
    assert "print(x / 0)" in first_report["content"]  # the failing line is shown
    assert result.totals["executions"] == 2 and result.totals["failed_executions"] == 1


def test_check_failure_is_repaired_next_turn(workspaces, loop_file):
    path = loop_file([py("print(41)"), py("open('result.txt','w').write('ok'); print(42)")],
                         checks=[{"stdout_contains": "42"}, {"file_exists": "result.txt"}])
    result = run(path)
    assert result.status == "success"
    msgs = messages(result)
    assert msgs[2]["content"].startswith("Acceptance checks (these decide success): 2 of 2 failed.\n")
    assert "Your run (information only; the checks decide success): exit code 0." in msgs[2]["content"]
    assert "expected the output to contain '42'" in msgs[2]["content"]
    assert [c["passed"] for c in msgs[2]["outcome"]["checks"]] == [False, False]
    assert [c["passed"] for c in msgs[4]["outcome"]["checks"]] == [True, True]


@pytest.mark.docker
def test_pytest_check_runs_in_sandbox(sandbox_image, workspaces, scenario_file, tmp_path):
    (tmp_path / "test_out.py").write_text(
        "from pathlib import Path\n\ndef test_file():\n    assert Path('out.txt').read_text() == 'hello'\n")
    path = scenario_file([py("open('out.txt','w').write('HELLO')"), py("open('out.txt','w').write('hello')")],
                         checks=[{"pytest": "test_out.py"}])
    result = run(path)
    assert result.status == "success"
    msgs = messages(result)
    assert "assert" in msgs[2]["content"] and msgs[2]["outcome"]["checks"][0]["passed"] is False


def test_termination_by_contains_predicate(workspaces, loop_file):
    path = loop_file([py("print('done')"), "All good. TERMINATE", py("print('never runs')")],
                         termination={"contains": "TERMINATE"})
    result = run(path)
    msgs = messages(result)
    assert [m["role"] for m in msgs] == ["task", "assistant", "execution", "assistant"]
    assert result.status == "success"


def test_a_task_that_says_reply_terminate_does_not_end_the_run_before_the_model_is_asked(workspaces,
                                                                                        loop_file):
    # AG2 tutorials phrase tasks this way; the predicate judges the assistant's words, never the task
    path = loop_file([py("print('hi')"), "TERMINATE"], task="Print hi, then reply TERMINATE when done.",
                         termination={"contains": "TERMINATE"})
    result = run(path)
    assert result.status == "success", result.reason
    assert [m["role"] for m in messages(result)] == ["task", "assistant", "execution", "assistant"]


def test_reply_limit_stops_the_run(workspaces, loop_file):
    path = loop_file([py(f"raise SystemExit({i})") for i in range(1, 11)],
                         user_proxy={"max_consecutive_auto_reply": 2})
    result = run(path)
    assert result.status == "max_replies"
    assert result.totals["executions"] == 3  # the last reply the limit allows still runs
    assert result.totals["turns"] == 3


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_infinite_loop_is_killed_and_run_goes_on(workspaces, loop_file):
    path = loop_file([py("while True:\n    pass"), py("print('recovered')")], sandbox={"timeout": 1})
    result = run(path)
    assert result.status == "success"
    first = messages(result)[2]["outcome"]["executions"][0]
    assert first["timed_out"] is True and first["exit_code"] != 0
    assert "time limit" in messages(result)[2]["content"]


def test_no_code_block_gets_a_nudge_once_the_reasks_are_spent(workspaces, loop_file):
    result = run(loop_file(["I think the answer is 42.", py("print(42)")], strategy={"max_resamples": 0}))
    msgs = messages(result)
    assert msgs[2]["role"] == "user_proxy" and "no code block" in msgs[2]["content"]
    assert result.status == "success"


@pytest.mark.docker
def test_transcript_round_trips(sandbox_image, workspaces, scenario_file):
    result = run(scenario_file([py("print('hi')")]))
    data = load_transcript(result.run_dir)
    raw = json.loads((result.run_dir / "transcript.json").read_text())
    assert data == raw | {"run_dir": raw["run_dir"]}
    assert data["format"] == FORMAT
    assert data["status"] == "success" and data["model"]["provider"] == "scripted"
    assert data["sandbox"]["image"] == sandbox_image
    assert data["started_at"] <= data["ended_at"]
    events = [json.loads(line) for line in (result.run_dir / "events.jsonl").read_text().splitlines()]
    assert [e["type"] for e in events][0] == "start" and events[-1]["type"] == "end"
    assert [e["content"] for e in events if e["type"] == "message"] == [m["content"] for m in data["messages"]]
