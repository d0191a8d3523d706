"""How an attempt ended (AttemptSummary, from its last execution and why its conversation stopped), how attempts
rank, and the run's status from its attempts."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from agents.loop.status import Status, StopReason

if TYPE_CHECKING:
    from agents.feedback.feedback import Outcome
    from agents.loop.budget import TimeBudget


@dataclass
class AttemptSummary:
    """How one attempt ended; `to_dict()` is the transcript's `attempt` event and RunResult.attempts item."""

    attempt: int
    status: Status
    """success | failed | max_replies | timeout"""
    reason: str
    success: bool
    checks_passed: int
    checks: int
    ran_clean: bool
    """The last execution exited 0."""
    summary: str
    """One line on what the last execution did (what a fresh attempt is told)."""
    stop_reason: StopReason | None
    turns: int
    workspace: str
    tests_passed: int = 0
    """Tests the pytest checks passed in the last execution (ranks attempts that pass the same checks)."""

    def to_dict(self) -> dict[str, Any]:
        """The plain dict, keys in this order."""
        return asdict(self)


def final_status(last: Outcome | None, stop_reason: StopReason | None, limit: int) -> tuple[Status, str]:
    """An attempt's success | failed | max_replies, with a reason a person can read, from its last execution and
    why its conversation ended."""
    if last is not None and last.success:  # the checks decide when there are any (Outcome.success)
        return "success", ("every acceptance check passed" if last.checks else "the last execution exited 0")
    if stop_reason == "stuck":
        return "failed", "the model sent again code that had already run (code is never run twice)"
    if stop_reason == "prose_loop":
        return "failed", "the model kept answering without code, the same text again after a nudge"
    if stop_reason == "max_replies":
        return "max_replies", f"reached max_consecutive_auto_reply={limit}"
    if stop_reason == "human_exit":
        return "failed", "ended by the user before a successful execution"
    if last is None:
        return "failed", "the conversation ended without any code being executed"
    return "failed", "the conversation ended after a failed execution or failed checks"


def attempt_score(summary: AttemptSummary) -> tuple[int, int, int, int]:
    """Orders attempts: success first, then most checks passed, then most tests passed, then code that ran clean
    (a command-line tool that printed its usage when run bare counts: it did not crash), then the earlier one."""
    return (1 if summary.success else 0, summary.checks_passed, summary.tests_passed, 1 if summary.ran_clean else 0)


def best_attempt(summaries: list[AttemptSummary]) -> AttemptSummary | None:
    """The attempt to keep: the first successful one, else the one with the most checks passed (earliest wins ties)."""
    if not summaries:
        return None
    return max(summaries, key=lambda s: (attempt_score(s), -s.attempt))


def overall_status(summaries: list[AttemptSummary], budget: int, time_budget: TimeBudget | None = None,
                   until_budget: bool = False) -> tuple[Status, str]:
    """The run's status: the first successful attempt's; else `timeout` when the time budget ended the run (saying
    how far it got); else the best attempt's, saying how many were tried. `until_budget`: attempts went on until
    the time budget was spent (`attempts: auto`), so `budget` is only their cap and is not named."""
    best = best_attempt(summaries)
    if best is None:
        return "failed", "no attempt ran"
    last = summaries[-1]
    timed_out = last.stop_reason == "timeout" or (not best.success and time_budget is not None
                                                  and time_budget.spent() and len(summaries) < budget)
    ran = f"{len(summaries)}" if until_budget else f"{len(summaries)} of {budget}"
    if timed_out and not best.success:
        where = last.reason if last.stop_reason == "timeout" else \
            f"the time budget of {time_budget.seconds:g} s ran out before attempt {len(summaries) + 1}"
        return "timeout", (f"{where}; {ran} attempt(s) ran, "
                           f"{sum(s.turns for s in summaries)} turn(s); kept attempt {best.attempt} "
                           f"({best.checks_passed}/{best.checks} checks passed: {best.summary})")
    if len(summaries) == 1 and budget == 1:
        return best.status, best.reason
    if best.success:
        return "success", f"attempt {best.attempt}{'' if until_budget else f' of {budget}'}: {best.reason}"
    return best.status, (f"no attempt succeeded ({ran} tried); kept attempt "
                         f"{best.attempt} ({best.checks_passed}/{best.checks} checks passed): {best.reason}")
