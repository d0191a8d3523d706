"""Run a Scenario: up to `strategy.attempts` fresh conversations (agents/attempt.py), all in one recorded run."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from agents.attempt import AttemptSetup, run_attempt
from agents.briefing import briefed_task
from agents.budget import TimeBudget
from agents.changes import record_changes
from agents.display import NullDisplay
from agents.errors import CodeduetError, EnvironmentProblem, disk_full
from agents.models.config import build_provider
from agents.paths import default_workspaces
from agents.prompts import PROMPT_VERSION
from agents.protocols import Display, ModelProvider, Recorder
from agents.proxy import HumanInput
from agents.repeats import RepeatMemory
from agents.run_folder import new_run_dir, workspace_name
from agents.run_options import RunOptions
from agents.sandbox.config import SandboxConfig
from agents.sandbox.preflight import preflight, warnings_for
from agents.scenario import Scenario
from agents.status import AttemptSummary, best_attempt, overall_status
from agents.strategy import attempt_message
from agents.transcript import JsonlRecorder

__all__ = ["RunOptions", "RunResult", "run_scenario", "resolve_model"]


@dataclass
class RunResult:
    """What a finished run left behind."""

    run_dir: Path
    status: str
    reason: str
    totals: dict[str, Any]
    transcript: Path
    error: CodeduetError | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    """One summary per attempt (status, reason, checks passed, workspace)."""
    chosen_attempt: int | None = None
    """The attempt kept: the first successful one, else the one with the most checks passed."""
    changed_files: list[dict[str, Any]] = field(default_factory=list)
    """What the kept attempt changed in the starting files (agents/changes.py): {path, change, added, removed, size}."""


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


def with_languages(sandbox: SandboxConfig, languages: list[str]) -> SandboxConfig:
    """The sandbox with more languages: its image and limits are those of the new set where the scenario named
    none."""
    given = sandbox.model_dump(exclude_unset=True)
    return SandboxConfig.model_validate({**given, "languages": [*sandbox.languages, *languages]})


def resolve_model(scenario: Scenario, opts: RunOptions) -> ModelProvider:
    """The provider for --model, else the scenario's model, else configs/llm.yaml's default."""
    spec = opts.model if opts.model is not None else scenario.model
    return build_provider(spec, origin=str(scenario.path or "<scenario>"))


def run_scenario(scenario: Scenario, opts: RunOptions | None = None, display: Display | None = None,
                 human: HumanInput | None = None) -> RunResult:
    """Run one scenario end to end (fresh attempts until one succeeds); the transcript is written whatever happens."""
    opts = opts or RunOptions()
    display = display or NullDisplay()
    provider = resolve_model(scenario, opts)
    overrides = {k: v for k, v in (("attempts", opts.attempts), ("max_seconds", opts.max_seconds)) if v is not None}
    if overrides:
        scenario = scenario.model_copy(update={"strategy": scenario.strategy.model_copy(update=overrides)})
    if opts.languages and not set(opts.languages) <= set(scenario.sandbox.languages):
        scenario = scenario.model_copy(update={"sandbox": with_languages(scenario.sandbox, opts.languages)})
    provider.check_ready(display.console)  # an automatic model pull shows its progress bar there
    for line in preflight(scenario.sandbox):
        display.info(line)
    run_dir, run_id = new_run_dir(opts.workspaces or default_workspaces(), scenario.name or "run")
    limit = scenario.user_proxy.max_consecutive_auto_reply if opts.max_auto_reply is None else opts.max_auto_reply
    mode = (opts.human or scenario.user_proxy.human_input_mode).upper()
    recorder: Recorder = JsonlRecorder(run_dir, {
        "run_id": run_id, "run_dir": str(run_dir), "scenario": scenario.snapshot(), "model": provider.describe(),
        "sandbox": {"kind": scenario.sandbox.kind, "image": scenario.sandbox.image,
                    "network": scenario.sandbox.network}, "warnings": warnings_for(scenario.sandbox),
        "human_input_mode": mode, "max_consecutive_auto_reply": limit, "prompt_version": PROMPT_VERSION,
        "strategy": scenario.strategy.model_dump(), "parent": opts.parent,
        "process": {"pid": os.getpid(), "host": socket.gethostname()}}, secrets=provider.secrets())
    memory = RepeatMemory()
    for reply, report in zip(opts.history, opts.history[1:]):  # code the resumed run executed is not run again
        if reply.get("role") == "assistant" and ((report.get("outcome") or {}).get("executions")):
            memory.remember(reply.get("content"), 0, 0, (report.get("outcome") or {}).get("summary")
                            or "it ran in the run this one resumes")
    setup = AttemptSetup(scenario, provider, recorder, display, memory, run_dir, run_id, limit, mode, human,
                         TimeBudget(scenario.strategy.max_seconds))
    display.run_started(scenario, provider.describe(), run_dir)
    status, reason, error, interrupted = "error", "the run did not finish", None, False
    summaries: list[AttemptSummary] = []
    budget = scenario.strategy.attempt_limit()
    if mode != "NEVER" or opts.history:
        # a person steers (they decide when to stop), or a resumed conversation goes on with its follow-up:
        # a fresh attempt would silently drop either, so there is exactly one conversation
        budget = 1
    until_budget = budget > 1 and scenario.strategy.attempts_until_budget()
    task = briefed_task(scenario.task, scenario.text_files(), scenario.strategy.file_preview)
    try:
        for attempt in range(1, budget + 1):
            if setup.budget.spent():  # a fresh attempt would not get a turn in
                break
            if attempt == 1:
                message, history = opts.first_message or task, opts.history
            else:
                of = f"{attempt}, {setup.budget.remaining() or 0:.0f} s left" if until_budget else f"{attempt}/{budget}"
                display.info(f"[bold]attempt {of}[/]: a fresh conversation "
                             f"(attempt {attempt - 1}: {summaries[-1].summary})")
                message, history = attempt_message(task, attempt, summaries, scenario.strategy), None
            summary = run_attempt(setup, attempt, message, history)
            summaries.append(summary)
            recorder.event("attempt", **summary.to_dict())
            if summary.success or summary.stop_reason in ("human_exit", "timeout"):
                break
        status, reason = overall_status(summaries, budget, setup.budget, until_budget)
    except KeyboardInterrupt:
        status, reason, interrupted = "interrupted", "stopped by Ctrl-C / SIGTERM", True
    except CodeduetError as exc:
        status, reason, error = "error", str(exc), exc
        if getattr(exc, "partial", None):  # what the model had sent of the reply it was writing
            recorder.event("partial_reply", content=exc.partial, reason=reason)
    except Exception as exc:  # a full disk, a bug or a backend failure: recorded, then shown as one line
        error = disk_full(exc, run_dir) or CodeduetError(f"{type(exc).__name__}: {exc}".splitlines()[0])
        status, reason = "error", str(error)
    finally:
        display.stop_live()
        best = best_attempt(summaries)
        chosen = best.attempt if best else None
        changed = record_changes(run_dir, run_dir / workspace_name(chosen or 1), scenario.starting_files())
        path = recorder.finish(status, reason, chosen_attempt=chosen, changed_files=changed)
        display.run_finished(status, reason, run_dir)
    failed = getattr(recorder, "failed", None)  # the disk filled: what the log holds is all that was kept
    if failed is not None and not interrupted and (error is None or not isinstance(error, EnvironmentProblem)):
        status, reason, error = "error", str(failed), failed
    result = RunResult(run_dir, status, reason, recorder.totals(), path, error, [a.to_dict() for a in summaries],
                       chosen, changed)
    if interrupted:
        raise RunInterrupted(result)
    return result

