"""Opening and closing a run, around the loop over attempts in agents/loop/conversation.py.

Opening: the model (--model, else the scenario's, else configs/llm.yaml's default), the command line's overrides,
the preflight checks, the run folder with its transcript header, and the repeat memory of a resumed run. Closing:
what the kept attempt changed, the transcript's end, and the disk-full check.
"""

from __future__ import annotations

import os
import shutil
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.feedback.prompts import PROMPT_VERSION
from agents.loop.attempt import AttemptSetup
from agents.loop.attempt_summary import AttemptSummary, best_attempt
from agents.loop.briefing import briefed_task
from agents.loop.budget import TimeBudget
from agents.loop.errors import BadInputError, CodeduetError, EnvironmentProblem, disk_full
from agents.loop.protocols import Display, ModelProvider
from agents.loop.proxy import HumanInput
from agents.loop.repeats import RepeatMemory
from agents.loop.roles import ROLE_NAMES
from agents.loop.run_options import RunOptions
from agents.loop.strategy import attempt_message
from agents.models.config import build_provider
from agents.record.changes import record_changes
from agents.record.paths import default_workspaces
from agents.record.run_folder import KEEP_SCENARIO_ENV, SCENARIO_FILE, new_run_dir, workspace_name
from agents.record.transcript import JsonlRecorder
from agents.sandbox.config import SandboxConfig
from agents.sandbox.preflight import image_packages, preflight, warnings_for
from agents.scenario.spec import RoleConfig, Scenario


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
    """What the kept attempt changed in the starting files (agents/record/changes.py): {path, change, added, removed,
    size}."""


@dataclass
class OpenRun:
    """A run whose folder and transcript exist: what its attempts share, how many it may start, and its task."""

    setup: AttemptSetup
    attempts: int
    """At most this many attempts (1 when a person steers or a conversation is resumed)."""
    until_budget: bool
    """`attempts: auto`: attempts go on until the time budget is spent."""
    task: str
    opts: RunOptions

    def message(self, attempt: int, before: list[AttemptSummary]) -> tuple[str, list[dict[str, Any]] | None]:
        """What attempt `attempt` opens with: the task (or the resumed run's follow-up and history), else the task
        with what the attempts `before` it did (announced on the display)."""
        if attempt == 1:
            return self.opts.first_message or self.task, self.opts.history
        left = self.setup.budget.remaining() or 0
        of = f"{attempt}, {left:.0f} s left" if self.until_budget else f"{attempt}/{self.attempts}"
        self.setup.display.info(f"[bold]attempt {of}[/]: a fresh conversation "
                                f"(attempt {attempt - 1}: {before[-1].summary})")
        return attempt_message(self.task, attempt, before, self.setup.scenario.strategy), None


def with_languages(sandbox: SandboxConfig, languages: list[str]) -> SandboxConfig:
    """The sandbox with more languages: its image and limits are those of the new set where the scenario named
    none."""
    given = sandbox.model_dump(exclude_unset=True)
    return SandboxConfig.model_validate({**given, "languages": [*sandbox.languages, *languages]})


def resolve_model(scenario: Scenario, opts: RunOptions) -> ModelProvider:
    """The provider for --model, else a team developer's own model, else the scenario's model, else configs/llm.yaml's
    default."""
    developer = scenario.developer
    own = developer.model if developer is not None else None
    spec = opts.model if opts.model is not None else own if own is not None else scenario.model
    return build_provider(spec, origin=str(scenario.path or "<scenario>"))


def overridden(scenario: Scenario, opts: RunOptions) -> Scenario:
    """The scenario with the command line's --attempts, --max-seconds, --languages, --session and --team applied."""
    overrides = {k: v for k, v in (("attempts", opts.attempts), ("max_seconds", opts.max_seconds)) if v is not None}
    if overrides:
        scenario = scenario.model_copy(update={"strategy": scenario.strategy.model_copy(update=overrides)})
    if opts.languages and not set(opts.languages) <= set(scenario.sandbox.languages):
        scenario = scenario.model_copy(update={"sandbox": with_languages(scenario.sandbox, opts.languages)})
    if opts.team and not scenario.team and not opts.baseline:
        scenario = scenario.model_copy(update={"team": [RoleConfig(role=r) for r in ROLE_NAMES]})
    if opts.baseline:
        scenario = baseline(scenario)
    if opts.session and opts.session != scenario.sandbox.session:
        try:
            sandbox = SandboxConfig.model_validate({**scenario.sandbox.model_dump(exclude_unset=True),
                                                    "session": opts.session})
        except ValueError as exc:  # pydantic's ValidationError: --session kernel on a local sandbox
            raise BadInputError(f"--session {opts.session}: {exc.errors()[0]['msg'].removeprefix('Value error, ')}"
                                if hasattr(exc, "errors") else str(exc)) from None
        scenario = scenario.model_copy(update={"sandbox": sandbox})
    return scenario


BASELINE = {"attempts": 1, "candidates": 1, "max_resamples": 0, "repeat_reasks": 0, "reask_candidates": 1,
            "summary": False}
"""The strategy of the paper's static baseline: one reply, greedy, run once."""


def baseline(scenario: Scenario) -> Scenario:
    """The scenario as the paper's static baseline runs it: one reply of the developer (no planner, no QA), run once
    and judged by the checks, with no feedback to the model (the proxy's reply limit 0: the first reply runs and the
    conversation ends on its report)."""
    return scenario.model_copy(update={
        "strategy": scenario.strategy.model_copy(update=BASELINE), "team": None,
        "user_proxy": scenario.user_proxy.model_copy(update={"max_consecutive_auto_reply": 0})})


def setup_name(scenario: Scenario, opts: RunOptions) -> str:
    """baseline, pair or team: how the run's code was written (the metrics group runs by it)."""
    return "baseline" if opts.baseline else "team" if scenario.team else "pair"


def resumed_memory(history: list[dict[str, Any]]) -> RepeatMemory:
    """The repeat memory of a resumed run: code its parent executed is not run again."""
    memory = RepeatMemory()
    for reply, report in zip(history, history[1:]):
        outcome = report.get("outcome") or {}
        if reply.get("role") == "assistant" and outcome.get("executions"):
            memory.remember(reply.get("content"), 0, 0, outcome.get("summary") or "it ran in the run this one resumes")
    return memory


def open_run(scenario: Scenario, opts: RunOptions, display: Display, human: HumanInput | None) -> OpenRun:
    """Resolve the model, apply the overrides, run the preflight checks, make the run folder and write its
    transcript header; the run is shown as started."""
    provider = resolve_model(scenario, opts)
    scenario = overridden(scenario, opts)
    provider.check_ready(display.console)  # an automatic model pull shows its progress bar there
    for line in preflight(scenario.sandbox, scenario.path):
        display.info(line)
    run_dir, run_id = new_run_dir(opts.workspaces or default_workspaces(), scenario.name or "run")
    if os.environ.get(KEEP_SCENARIO_ENV) and scenario.path is not None and scenario.path.is_file():
        shutil.copyfile(scenario.path, run_dir / SCENARIO_FILE)  # a typed task's scenario stays with its run
    limit = scenario.user_proxy.max_consecutive_auto_reply if opts.max_auto_reply is None or opts.baseline \
        else opts.max_auto_reply
    mode = (opts.human or scenario.user_proxy.human_input_mode).upper()
    recorder = JsonlRecorder(run_dir, {
        "run_id": run_id, "run_dir": str(run_dir), "scenario": scenario.snapshot(), "model": provider.describe(),
        "sandbox": {"kind": scenario.sandbox.kind, "image": scenario.sandbox.image,
                    "network": scenario.sandbox.network, **image_packages(scenario.sandbox)},
        "warnings": warnings_for(scenario.sandbox),
        "human_input_mode": mode, "max_consecutive_auto_reply": limit, "prompt_version": PROMPT_VERSION,
        "setup": setup_name(scenario, opts),
        "strategy": scenario.strategy.model_dump(), "parent": opts.parent,
        "process": {"pid": os.getpid(), "host": socket.gethostname()}}, secrets=provider.secrets())
    setup = AttemptSetup(scenario, provider, recorder, display, resumed_memory(opts.history), run_dir, run_id, limit,
                         mode, human, TimeBudget(scenario.strategy.max_seconds), opts.kernel_restore)
    display.run_started(scenario, provider.describe(), run_dir)
    attempts = scenario.strategy.attempt_limit()
    if mode != "NEVER" or opts.history:
        # a person steers (they decide when to stop), or a resumed conversation goes on with its follow-up:
        # a fresh attempt would silently drop either, so there is exactly one conversation
        attempts = 1
    task = briefed_task(scenario.task, scenario.text_files(), scenario.strategy.file_preview)
    return OpenRun(setup, attempts, attempts > 1 and scenario.strategy.attempts_until_budget(), task, opts)


def failure(exc: BaseException, run: OpenRun) -> tuple[str, str, CodeduetError | None]:
    """(status, reason, error) of a run that an exception stopped: Ctrl-C / SIGTERM, one of ours (what the model
    had sent of the reply it was writing is kept), else a full disk, a bug or a backend failure as one line."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", "stopped by Ctrl-C / SIGTERM", None
    if isinstance(exc, CodeduetError):
        if getattr(exc, "partial", None):
            run.setup.recorder.event("partial_reply", content=exc.partial, reason=str(exc))
        return "error", str(exc), exc
    error = disk_full(exc, run.setup.run_dir) or CodeduetError(f"{type(exc).__name__}: {exc}".splitlines()[0])
    return "error", str(error), error


def close_run(run: OpenRun, summaries: list[AttemptSummary], status: str, reason: str,
              error: CodeduetError | None) -> RunResult:
    """Record what the kept attempt changed, finish the transcript and show the end; a disk that filled while
    recording turns the run into an error (what the log holds is all that was kept)."""
    setup = run.setup
    setup.display.stop_live()
    best = best_attempt(summaries)
    chosen = best.attempt if best else None
    changed = record_changes(setup.run_dir, setup.run_dir / workspace_name(chosen or 1),
                             setup.scenario.starting_files())
    path = setup.recorder.finish(status, reason, chosen_attempt=chosen, changed_files=changed)
    setup.display.run_finished(status, reason, setup.run_dir)
    failed = getattr(setup.recorder, "failed", None)
    if failed is not None and status != "interrupted" and not isinstance(error, EnvironmentProblem):
        status, reason, error = "error", str(failed), failed
    return RunResult(setup.run_dir, status, reason, setup.recorder.totals(), path, error,
                     [a.to_dict() for a in summaries], chosen, changed)
