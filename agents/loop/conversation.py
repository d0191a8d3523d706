"""Run a Scenario: open the run (agents/loop/run_setup.py), then up to `strategy.attempts` fresh conversations
(agents/loop/attempt.py) until one succeeds, then close it; all in one recorded run."""

from __future__ import annotations

from typing import Callable, cast

from agents.loop.attempt import run_attempt
from agents.loop.attempt_summary import AttemptSummary, overall_status
from agents.loop.errors import CodeduetError
from agents.loop.protocols import Display
from agents.loop.proxy import HumanInput
from agents.loop.run_options import RunOptions
from agents.loop.run_setup import RunResult, close_run, failure, open_run
from agents.record.display import NullDisplay
from agents.scenario.spec import Scenario

__all__ = ["RunInterrupted", "RunOptions", "RunResult", "run_scenario", "until_stopped"]


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped a run: still a KeyboardInterrupt, carrying the saved run (its folder and status)."""

    def __init__(self, result: RunResult):
        super().__init__(f"interrupted: {result.run_dir}")
        self.result = result


def until_stopped(start: Callable[[], RunResult]) -> RunResult:
    """start() -> its RunResult, also when Ctrl-C stopped it (the CLI prints its folder and exits 130)."""
    try:
        return start()
    except RunInterrupted as stop:
        return stop.result


def run_scenario(scenario: Scenario, opts: RunOptions | None = None, display: Display | None = None,
                 human: HumanInput | None = None) -> RunResult:
    """Run one scenario end to end (fresh attempts until one succeeds); the transcript is written whatever happens."""
    run = open_run(scenario, opts or RunOptions(), display or NullDisplay(), human)
    status, reason, error = "error", "the run did not finish", cast("CodeduetError | None", None)
    summaries: list[AttemptSummary] = []
    try:
        for attempt in range(1, run.attempts + 1):
            if run.setup.budget.spent():  # a fresh attempt would not get a turn in
                break
            summary = run_attempt(run.setup, attempt, *run.message(attempt, summaries))
            summaries.append(summary)
            run.setup.recorder.event("attempt", **summary.to_dict())
            if summary.success or summary.stop_reason in ("human_exit", "timeout"):
                break
        status, reason = overall_status(summaries, run.attempts, run.setup.budget, run.until_budget)
    except (KeyboardInterrupt, Exception) as exc:
        status, reason, error = failure(exc, run)
    finally:
        result = close_run(run, summaries, status, reason, error)
    if result.status == "interrupted":
        raise RunInterrupted(result)
    return result
