"""A run's status: the statuses (agents/loop/status.py), their exit codes (agents/loop/errors.py), which attempt a run
keeps
(agents/loop/attempt_summary.py)."""

from __future__ import annotations

from agents.feedback.feedback import Outcome
from agents.loop import errors, status
from agents.loop.attempt_summary import AttemptSummary, best_attempt, final_status, overall_status
from agents.loop.protocols import ExecResult


def summary(attempt: int, success: bool, checks_passed: int, tests_passed: int = 0) -> AttemptSummary:
    return AttemptSummary(attempt=attempt, status="success" if success else "failed", reason="", success=success,
                          checks_passed=checks_passed, checks=2, ran_clean=True, summary="", stop_reason=None, turns=1,
                          workspace="workspace", tests_passed=tests_passed)


def test_best_attempt_is_the_first_success_else_most_checks_passed():
    a = [summary(1, False, 1), summary(2, False, 2), summary(3, False, 2)]
    assert best_attempt(a).attempt == 2
    assert best_attempt([*a, summary(4, True, 2)]).attempt == 4
    assert best_attempt([]) is None
    tied = [summary(1, False, 1, tests_passed=3), summary(2, False, 1, tests_passed=7), summary(3, False, 0, 9)]
    assert best_attempt(tied).attempt == 2  # the same checks passed: the most tests of the pytest checks


def test_the_run_keeps_the_best_attempt_and_says_how_many_were_tried():
    assert overall_status([], 3) == ("failed", "no attempt ran")
    status, reason = overall_status([summary(1, False, 1), summary(2, True, 2)], 3)
    assert (status, reason) == ("success", "attempt 2 of 3: ")
    status, reason = overall_status([summary(1, False, 1), summary(2, False, 0)], 2)
    assert status == "failed" and reason.startswith("no attempt succeeded (2 of 2 tried); kept attempt 1")


def test_an_attempt_ends_by_its_last_execution_else_by_why_it_stopped():
    ran = Outcome(kind="executed", results=[ExecResult(exit_code=0, output="ok", duration_s=0.1)])
    assert final_status(ran, None, 5) == ("success", "the last execution exited 0")
    assert final_status(None, "max_replies", 5) == ("max_replies", "reached max_consecutive_auto_reply=5")
    assert final_status(ran, "stuck", 5) == ("success", "the last execution exited 0")
    assert final_status(None, None, 5) == ("failed", "the conversation ended without any code being executed")


def test_every_status_has_its_exit_code_and_a_batch_takes_the_worst():
    codes = {s: errors.exit_code_for(s) for s in status.STATUSES}
    assert codes == {"success": 0, "failed": 1, "max_replies": 1, "timeout": 1, "interrupted": 130, "error": 1}
    ok, failed = {"status": "success", "exit_code": 0}, {"status": "failed", "exit_code": 1}
    bad, no_docker = {"status": "error", "exit_code": 2}, {"status": "error", "exit_code": 3}
    stopped = {"status": "interrupted", "exit_code": 130}
    assert [errors.batch_exit_code(rows) for rows in ([ok, ok], [ok, failed], [ok, bad, failed], [bad, no_docker],
                                                        [ok, stopped])] == [0, 1, 2, 3, 1]


def test_the_transcript_the_ui_and_replay_take_their_statuses_from_here():
    from agents.record.transcript import STATUSES as TRANSCRIPT
    from agents.replay.show import STATUS_STYLE
    from agents.ui.app import STATUSES as UI

    assert status.STATUSES == ("success", "failed", "max_replies", "timeout", "interrupted", "error")
    assert TRANSCRIPT is status.STATUSES and UI == ("running", *status.STATUSES)
    assert set(STATUS_STYLE) == set(status.STATUSES)  # replay styles every status
