"""A run's wall-clock budget (strategy.max_seconds, --max-seconds): the block or generation under way stops, the run
ends as `timeout` with everything saved, the summary says how far it got, a batch reports it per scenario
(issue 20 item 14). Real CLI runs: scripted model, the local executor (the budget is the loop's, not the sandbox's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.record.transcript import load_transcript
from tests.conftest import py
from tests.helpers import run_cli

SLEEPER = py("import time\nprint('started', flush=True)\ntime.sleep(60)")


def summary_of(proc) -> dict:
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_budget_stops_a_long_block_and_ends_the_run_as_timeout(loop_file, tmp_path):
    path = loop_file([py("print('first turn')\nraise SystemExit(1)"), SLEEPER, py("print('never run')")],
                         name="slow", sandbox={"timeout": 120}, strategy={"attempts": 3, "max_seconds": 2})
    proc = run_cli("run", str(path), "--workspace", str(tmp_path / "ws"), "--json", timeout=100)
    data = summary_of(proc)
    assert proc.returncode == 1 and data["status"] == "timeout", proc.stderr
    assert data["turns"] == 2 and data["executions"] == 2  # the sleeper ran, cut at the budget; no third turn
    assert data["reason"].startswith("the time budget of 2 s ran out before turn 3 of attempt 1; 1 of 3 attempt(s) "
                                     "ran, 2 turn(s); kept attempt 1"), data["reason"]
    t = load_transcript(Path(data["run_dir"]))
    assert t["status"] == "timeout" and t["reason"] == data["reason"]
    executions = [m for m in t["messages"] if m["role"] == "execution"]
    assert len(executions) == 2 and "started" in executions[1]["content"]
    assert executions[1]["outcome"]["executions"][0]["timed_out"]  # the block stopped, well before its 120 s
    spent = [json.loads(line) for line in (Path(data["run_dir"]) / "events.jsonl").read_text().splitlines()
             if '"budget_spent"' in line]
    assert [(e["attempt"], e["where"]) for e in spent] == [(1, "before turn 3 of attempt 1")]


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_max_seconds_stops_a_generation_and_overrides_the_scenario(loop_file, tmp_path):
    """The reply takes 600 s before its first token (as a long prompt's evaluation does, beating all along): the
    budget of 1 s stops it at a beat, well inside the test's 100 s."""
    path = loop_file([py("print('never')")], name="slowmodel", strategy={"attempts": 2, "max_seconds": 600},
                         model={"provider": "scripted", "replies": [py("print('never')")], "delay_s": 600})
    proc = run_cli("run", str(path), "--workspace", str(tmp_path / "ws"), "--max-seconds", "1", "--json",
                   timeout=100)
    data = summary_of(proc)
    assert proc.returncode == 1 and data["status"] == "timeout", proc.stderr
    assert data["reason"].startswith("the time budget of 1 s ran out while generating turn 1 of attempt 1"), data
    assert data["executions"] == 0
    t = load_transcript(Path(data["run_dir"]))
    assert [m["role"] for m in t["messages"]] == ["task"] and t["strategy"]["max_seconds"] == 1


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_budget_cuts_a_check_that_would_run_past_it(loop_file, tmp_path):
    """A command check that would take 600 s (its own timeout is 900 s) is cut at the budget's end: the check fails
    as timed out and the run ends before turn 2, well inside the test's 100 s."""
    path = loop_file([py("print('ran')"), py("print('never')")], name="slowcheck", sandbox={"timeout": 120},
                     checks=[{"command": "sleep 600", "timeout": 900}], strategy={"max_seconds": 3})
    proc = run_cli("run", str(path), "--workspace", str(tmp_path / "ws"), "--json", timeout=100)
    data = summary_of(proc)
    assert proc.returncode == 1 and data["status"] == "timeout", proc.stderr
    assert data["reason"].startswith("the time budget of 3 s ran out before turn 2 of attempt 1"), data["reason"]
    t = load_transcript(Path(data["run_dir"]))
    check = t["messages"][2]["outcome"]["checks"][0]
    assert not check["passed"] and "timed out" in check["detail"], check


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_batch_reports_the_timeout_per_scenario(loop_file, tmp_path):
    slow = loop_file([SLEEPER], name="slow", sandbox={"timeout": 120})
    quick = loop_file([py("print('quick')")], name="quick")
    proc = run_cli("run", str(slow), str(quick), "--max-seconds", "2", "--workspace", str(tmp_path / "ws"),
                   "--json", timeout=100)
    rows = {Path(r["scenario"]).stem: r for r in map(json.loads, proc.stdout.splitlines()) if "batch" not in r}
    assert rows["slow"]["status"] == "timeout" and rows["slow"]["exit_code"] == 1
    assert rows["quick"]["status"] == "success"
    assert proc.returncode == 1


def test_max_seconds_must_be_positive(loop_file, tmp_path):
    path = loop_file([py("print(1)")], name="bad", strategy={"max_seconds": 0})
    proc = run_cli("run", str(path), "--workspace", str(tmp_path / "ws"))
    assert proc.returncode == 2 and "strategy.max_seconds" in proc.stderr and len(proc.stderr.splitlines()) == 1


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_candidates_still_to_generate_when_the_budget_runs_out_are_dropped_and_the_first_goes_on(loop_file, tmp_path):
    """Candidate 1 runs first and fails a check; the budget runs out while the others are generated (they stream
    to no screen, yet they stop): the turn goes on with candidate 1, its run is kept, and the run ends before
    turn 2 instead of decoding candidates past the budget."""
    wrong, right = py("print(6 * 7 + 1)"), py("print(6 * 7)")
    path = loop_file([wrong, right, right, right], name="late", checks=[{"stdout_contains": "42"}],
                     strategy={"candidates": 4, "max_seconds": 5},
                     model={"provider": "scripted", "replies": [wrong, right, right, right], "delay_s": 3})
    proc = run_cli("run", str(path), "--workspace", str(tmp_path / "ws"), "--json", timeout=100)
    data = summary_of(proc)
    assert proc.returncode == 1 and data["status"] == "timeout", proc.stderr
    assert data["reason"].startswith("the time budget of 5 s ran out before turn 2 of attempt 1"), data["reason"]
    run_dir = Path(data["run_dir"])
    found = [e for e in map(json.loads, (run_dir / "events.jsonl").read_text().splitlines())
             if e.get("type") == "candidate"]
    assert [(c["index"], c["chosen"], c.get("budget_spent")) for c in found] == [(1, True, True)]
    t = load_transcript(run_dir)
    assert [m["role"] for m in t["messages"]] == ["task", "assistant", "execution"]
    assert t["messages"][1]["content"] == wrong and "43" in t["messages"][2]["content"]
    shown = run_cli("replay", str(run_dir))
    assert "1 of 4 candidates for attempt 1 turn 1: candidate 1 chosen; the time budget ran out before the others " \
           "were generated" in " ".join(shown.stdout.split()), shown.stdout


def _attempt_run(loop_file, tmp_path, name: str, strategy: dict) -> tuple[dict, dict]:
    """Four different wrong scripts, then the right one; one reply per attempt, so each attempt is one script."""
    wrong, right = [py(f"print(6 * 7 + {k})") for k in range(1, 5)], py("print(6 * 7)")
    path = loop_file([*wrong, right], name=name, checks=[{"stdout_contains": "42"}],
                     user_proxy={"max_consecutive_auto_reply": 0}, strategy=strategy)
    proc = run_cli("run", str(path), "--workspace", str(tmp_path / name), "--json", timeout=200)
    data = summary_of(proc)
    return data, load_transcript(Path(data["run_dir"]))


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_attempts_auto_goes_on_with_fresh_attempts_while_the_time_budget_lasts(loop_file, tmp_path):
    """`attempts: auto` with max_seconds: a fourth and fifth attempt start because time is left (without a budget
    the run stops after three: the next test); the fifth attempt's task names only the three latest failures."""
    data, t = _attempt_run(loop_file, tmp_path, "until", {"attempts": "auto", "max_seconds": 300})
    assert data["status"] == "success", data
    assert data["reason"].startswith("attempt 5: ") and " of " not in data["reason"].split(":")[0], data["reason"]
    assert [a["attempt"] for a in t["attempts"]] == [1, 2, 3, 4, 5] and t["attempts"][-1]["success"]
    fifth = [m for m in t["messages"] if m["role"] == "task" and m.get("attempt") == 5][0]["content"]
    assert "- attempt 2:" in fifth and "- attempt 4:" in fifth and "- attempt 1:" not in fifth, fifth


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_attempts_auto_without_a_time_budget_is_three(loop_file, tmp_path):
    data, t = _attempt_run(loop_file, tmp_path, "three", {"attempts": "auto"})
    assert data["status"] == "max_replies" and "(3 of 3 tried)" in data["reason"], data["reason"]
    assert len(t["attempts"]) == 3


def test_attempts_must_be_a_count_or_auto(loop_file, tmp_path):
    for bad in (0, "many", 51):
        path = loop_file([py("print(1)")], name="bad", strategy={"attempts": bad})
        proc = run_cli("run", str(path), "--workspace", str(tmp_path / "ws"))
        assert proc.returncode == 2 and "strategy.attempts" in proc.stderr and len(proc.stderr.splitlines()) == 1, \
            proc.stderr
