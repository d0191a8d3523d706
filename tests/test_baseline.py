"""`run --baseline`: the paper's static baseline as a setup of the product: one reply, run once, judged by the
checks, with no feedback to the model and no team; its transcript says `setup: baseline` and the metrics count it."""

from __future__ import annotations

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.metrics import batch_metrics, run_facts
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.conftest import py

WRONG = py("print(6 * 6)")
RIGHT = py("print(6 * 7)")


def test_the_baseline_runs_one_reply_once_and_gives_no_feedback(loop_file, workspaces):
    path = loop_file([WRONG, RIGHT], checks=[{"stdout_contains": "42"}], team=["planner", "developer", "qa"],
                     strategy={"attempts": 3, "candidates": 2})
    result = run_scenario(load_scenario(path), RunOptions(baseline=True))
    t = load_transcript(result.run_dir)
    assert result.status == "max_replies" and t["setup"] == "baseline"  # its one reply ran, and it was wrong
    assert [m["role"] for m in t["messages"]] == ["task", "assistant", "execution"]  # no plan, no second reply
    assert t["max_consecutive_auto_reply"] == 0 and t["strategy"]["attempts"] == 1 and t["strategy"]["candidates"] == 1
    facts = run_facts(t)
    assert facts["setup"] == "baseline" and facts["initial_errors"] == 1 and facts["final_ran"] is True
    metrics = batch_metrics([facts])
    assert metrics["execution_success_rate"] == 0.0 and metrics["paper_execution_success_rate"] == 1.0


def test_the_same_scenario_as_a_pair_gets_its_feedback_and_fixes_it(loop_file, workspaces):
    path = loop_file([WRONG, RIGHT], checks=[{"stdout_contains": "42"}], strategy={"attempts": 1, "candidates": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    t = load_transcript(result.run_dir)
    assert result.status == "success" and t["setup"] == "pair"
    facts = run_facts(t)
    assert facts["refinements"] == 1 and batch_metrics([facts])["refinements_to_success"] == {"1": 1}


def test_a_baseline_run_that_crashes_did_not_run_without_errors(loop_file, workspaces):
    path = loop_file([py("raise SystemExit(3)")], checks=[{"stdout_contains": "42"}])
    t = load_transcript(run_scenario(load_scenario(path), RunOptions(baseline=True)).run_dir)
    facts = run_facts(t)
    assert facts["final_ran"] is False and facts["first_lines"] == 1
    assert batch_metrics([facts])["paper_execution_success_rate"] == 0.0


def test_a_file_that_only_was_saved_but_does_not_build_did_not_run_without_errors():
    """A C file without main is only saved (exit 0); its hidden check builds it: a compiler error there counts."""
    from agents.record.metrics import build_or_run_error

    assert build_or_run_error({"passed": False, "detail": "it exited with 1:\nbits.hpp:12:5: error: expected ';'"})
    assert build_or_run_error({"passed": False, "detail": "`python3 app.py` exited with 1 before it listened on "
                                                          "port 8000; its output:\nTraceback (most recent call last)"})
    assert not build_or_run_error({"passed": False, "detail": "1 of 3 tests failed: test_sum\nassert 5 == 6"})
    assert not build_or_run_error({"passed": True, "detail": ""})


def test_a_run_whose_checks_all_passed_ran_without_errors_whatever_an_extra_block_did(loop_file, workspaces):
    """The 1.5B sometimes sends the output it expects as a ```sh block after its program: the block fails as a
    command (exit 127), the program passed every check. The paper's ESR asks whether the program built and ran."""
    expected_output = "```sh\n# ./answer.py\nThe answer: 42\n```"
    path = loop_file([py("# filename: answer.py\nprint('The answer:', 6 * 7)") + "\n\n" + expected_output],
                     checks=[{"command": "python3 answer.py | grep -q 42"}], strategy={"attempts": 1, "candidates": 1})
    t = load_transcript(run_scenario(load_scenario(path), RunOptions()).run_dir)
    runs = [m for m in t["messages"] if m.get("outcome")][-1]["outcome"]["executions"]
    assert t["status"] == "success" and [r["exit_code"] for r in runs] == [0, 127]
    facts = run_facts(t)
    assert facts["final_ran"] is True and batch_metrics([facts])["paper_execution_success_rate"] == 1.0
