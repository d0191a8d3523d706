"""One attempt: a fresh AssistantAgent ↔ sandbox UserProxyAgent conversation in its own container and workspace."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from autogen import AssistantAgent

from agents.feedback.prompts import render, system_message
from agents.feedback.workspace_view import last_block
from agents.loop.ag2_adapter import install_assistant_reply, quiet_ag2, record_sent_messages, seed_history
from agents.loop.attempt_summary import AttemptSummary, final_status
from agents.loop.budget import BudgetSpent, TimeBudget
from agents.loop.candidates import CandidateRunner
from agents.loop.codeblocks import extract_code_blocks
from agents.loop.protocols import Display, Executor, ModelProvider, Recorder
from agents.loop.proxy import HumanInput, SandboxProxy
from agents.loop.repeats import RepeatMemory
from agents.loop.team import Team
from agents.loop.termination import RunContext, compile_predicate
from agents.loop.turn_policy import ASSISTANT_LIMIT_HEADROOM, TurnPolicy
from agents.models.config import build_provider
from agents.record.run_folder import sandbox_id, workspace_name
from agents.sandbox import make_executor
from agents.scenario.project_files import write_files
from agents.scenario.spec import Scenario


@dataclass
class AttemptSetup:
    """What every attempt of one run shares."""

    scenario: Scenario
    provider: ModelProvider
    recorder: Recorder
    display: Display
    memory: RepeatMemory
    run_dir: Path
    run_id: str
    limit: int
    mode: str
    human: HumanInput | None = None
    budget: TimeBudget = field(default_factory=lambda: TimeBudget(None))
    """The run's wall-clock budget (strategy.max_seconds), shared by its attempts."""
    restore: list[tuple[str, str]] = field(default_factory=list)
    """A resumed kernel session: the files its parent's kernel ran, run first in attempt 1's kernel."""
    tried_plans: list[tuple[str, str]] = field(default_factory=list)
    """A team's plans of earlier attempts and how each attempt ended: a fresh attempt's Planner reads them."""


def make_team(setup: AttemptSetup, attempt: int) -> Team | None:
    """The attempt's Planner and QA agents (agents/loop/team.py) when the scenario has a `team:`; a role with its own
    model gets its own provider, checked now."""
    scenario = setup.scenario
    if not scenario.team:
        return None
    built: dict[str, ModelProvider] = {}

    def provider_for(spec: Any) -> ModelProvider:
        key = json.dumps(spec, sort_keys=True, default=str)
        if key not in built:
            built[key] = build_provider(spec, origin=f"{scenario.path or '<scenario>'} (team)")
            built[key].check_ready()
            scrub = getattr(setup.recorder, "scrub", None)
            if scrub is not None:  # a role's own hosted model: its key is never written either
                scrub.add(built[key].secrets())
        return built[key]

    def sink(name: str) -> Any:
        return setup.budget.guard(setup.display.on_token, lambda: f"while the {name} wrote, in attempt {attempt}")

    cfg = scenario.strategy  # a fresh attempt's plan is sampled, as its Developer's first turn is
    replan = (cfg.attempt_temperature, cfg.seed + 10_000 * attempt + 99, cfg.top_p) if attempt > 1 else None
    return Team(scenario.team, setup.provider, provider_for, setup.recorder, setup.display, sink, attempt, replan)


def restore_session(setup: AttemptSetup, workspace: Path, executor: Executor) -> None:
    """A resumed kernel session: its parent's Python files run first in the fresh kernel (output dropped), so the
    variables the conversation speaks of exist; said on the display and in the events. Nothing for an executor
    that keeps no state (a process session)."""
    if executor.session_files() is None:
        return
    write_files(workspace, {name: text.encode() for name, text in setup.restore})
    with setup.budget.capped(executor):
        executor.restore([name for name, _ in setup.restore])
    setup.recorder.event("kernel_restored", files=[name for name, _ in setup.restore], kernel=executor.session_files())
    setup.display.info(f"kernel: ran the {len(setup.restore)} Python file(s) of the run this one continues, so "
                       f"their variables are here again")


def session_state(scenario: Scenario, executor: Executor) -> Callable[[], list[str]] | None:
    """What a candidate's sandbox runs first (the files of the attempt's session), where state lives on between
    blocks (a kernel session) and the strategy does not start candidates from scratch; else None."""
    if scenario.strategy.candidates_state == "scratch" or executor.session_files() is None:
        return None
    return lambda: executor.session_files() or []


def run_attempt(setup: AttemptSetup, attempt: int, message: str,
                history: list[dict[str, Any]] | None = None) -> AttemptSummary:
    """Run one conversation to its end; return how it ended (status, reason, checks passed, workspace)."""
    scenario, display = setup.scenario, setup.display
    workspace = setup.run_dir / workspace_name(attempt)
    workspace.mkdir()
    write_files(workspace, scenario.starting_files())
    files_task = scenario.about_files()
    setup.memory.begin(workspace, files_task)  # files this attempt's replies save are compared with this workspace
    executor = make_executor(scenario.sandbox, workspace, sandbox_id(setup.run_id, attempt))
    executor.counter = last_block(history or [])  # a resumed conversation's blocks go on from its parent's numbers
    context = RunContext(sent_contents={message})  # the task (or follow-up) is never judged as a reply
    predicate = compile_predicate(scenario.termination)
    policy = TurnPolicy(scenario.strategy, attempt, setup.mode, setup.memory, lambda m: predicate(m, context),
                        setup.budget, checks=len(scenario.checks), candidates=candidate_count(scenario, setup.provider),
                        replies=setup.limit,
                        reask_candidates=reask_candidate_count(scenario, setup.provider),
                        run_candidates=CandidateRunner(scenario, setup.run_dir, setup.run_id, attempt, workspace,
                                                       setup.budget, session_state=session_state(scenario, executor)))
    plan = None
    try:
        executor.start()
        setup.recorder.event("sandbox", attempt=attempt, **executor.describe())
        if attempt == 1 and setup.restore:
            restore_session(setup, workspace, executor)
        team = make_team(setup, attempt)
        proxy = SandboxProxy(scenario, executor, context, policy, human_input_mode=setup.mode,
                             max_consecutive_auto_reply=setup.limit, human=setup.human, display=display,
                             memory=setup.memory, attempt=attempt, budget=setup.budget, team=team,
                             is_termination_msg=lambda m: predicate(m, context)
                             and not extract_code_blocks(m.get("content")))
        developer = scenario.developer
        with quiet_ag2():
            assistant = AssistantAgent(developer.name if developer else scenario.assistant.name,
                                       llm_config=setup.provider.llm_config(),
                                       system_message=(developer.system_text if developer else None)
                                       or scenario.assistant.system_text
                                       or system_message(files_task, scenario.sandbox.languages,
                                                         executor.session_files() is not None,  # a kernel
                                                         scenario.sandbox.installed),
                                       is_termination_msg=policy.assistant_ends,
                                       max_consecutive_auto_reply=setup.limit + ASSISTANT_LIMIT_HEADROOM,
                                       human_input_mode="NEVER")
        setup.recorder.event("system", attempt=attempt, sender=assistant.name, content=assistant.system_message)
        setup.provider.attach(assistant, on_token=setup.budget.guard(
            display.on_token, lambda: f"while generating turn {policy.sampling.turn} of attempt {attempt}"))
        install_turns(assistant, policy, setup.provider, setup.recorder, display)
        _install_recording(assistant, proxy, setup, policy, attempt, team)
        seed_history(assistant, proxy, history or [])
        try:
            if team is not None and not history:  # the plan goes to the developer under the task, once an attempt
                plan = team.plan(scenario.task, setup.tried_plans)
                message = render("team_task", task=message, plan=plan.content) if plan else message
            with quiet_ag2():
                proxy.initiate_chat(assistant, message=message, clear_history=not history)
            status, reason = final_status(proxy.last_executed, policy.stop_reason, setup.limit)
        except BudgetSpent as spent:  # what was said and run so far is recorded already
            policy.stop_reason = "timeout"
            status, reason = "timeout", str(spent)
            setup.recorder.event("budget_spent", attempt=attempt, seconds=spent.seconds, where=spent.where)
            display.info(f"[yellow]{spent}[/]")
    finally:
        display.stop_live()
        executor.stop()
    last = proxy.last_executed
    said = last.summary() if last else "no code was executed"
    if plan is not None:
        setup.tried_plans.append((plan.content, said))
    return AttemptSummary(attempt=attempt, status=status, reason=reason, success=status == "success",
                          checks_passed=last.checks_passed if last else 0, checks=len(scenario.checks),
                          ran_clean=bool(last and last.ran_clean),
                          summary=said, stop_reason=policy.stop_reason,
                          turns=proxy.turns, workspace=workspace_name(attempt),
                          tests_passed=last.tests_passed if last else 0)


def candidate_count(scenario: Scenario, provider: ModelProvider) -> int:
    """strategy.candidates, with `auto` resolved by the model (4 for the embedded one, else 1)."""
    n = scenario.strategy.candidates
    return provider.default_candidates() if n == "auto" else int(n)


def reask_candidate_count(scenario: Scenario, provider: ModelProvider) -> int:
    """strategy.reask_candidates, with `auto` meaning the first turn's count."""
    n = scenario.strategy.reask_candidates
    return candidate_count(scenario, provider) if n == "auto" else int(n)


def install_turns(assistant: Any, policy: TurnPolicy, provider: ModelProvider, recorder: Recorder,
                  display: Display) -> None:
    """The assistant's model reply goes through the turn policy (sampling, candidates and re-asks)."""
    install_assistant_reply(assistant, lambda history, generate: policy.assistant_reply(
        history, generate, provider, recorder, display, assistant.name, system=assistant.system_message))


def _install_recording(assistant: AssistantAgent, proxy: SandboxProxy, setup: AttemptSetup, policy: TurnPolicy,
                       attempt: int, team: Team | None = None) -> None:
    """Record every message as it is sent (AG2 hook), with code blocks, executions, checks, usage and sampling."""
    state = {"first": True}
    provider, recorder, display = setup.provider, setup.recorder, setup.display

    def hook(sender: Any, message: Any, recipient: Any, silent: bool) -> Any:
        content = message if isinstance(message, str) else (message or {}).get("content")
        event: dict[str, Any] = {"sender": sender.name, "recipient": recipient.name, "content": content,
                                 "attempt": attempt}
        turn = None
        if sender is assistant:
            event["role"] = "assistant"
            event["turn"] = policy.sampling.turn
            event["code_blocks"] = [b.to_dict() for b in extract_code_blocks(content)]
            usage = provider.pop_usage()
            if usage:
                event["usage"] = usage.to_dict()
            if policy.sampling.last:
                event["sampling"] = policy.sampling.last
        else:  # the proxy says what it produced: a report, a nudge, a person's answer; the first message is the task
            turn = policy.sent()
            event["role"] = "task" if state["first"] else (turn.role if turn else "user_proxy")
            if turn is not None and turn.outcome is not None:
                event["outcome"] = turn.outcome.to_dict()
        state["first"] = False
        recorder.event("message", **event)
        display.on_message(event)
        if team is not None and turn is not None and turn.review is not None:  # the QA report the message carries
            team.record(turn.review)
        if sender is proxy:
            display.generation_started(assistant.name)
        return message

    record_sent_messages(assistant, hook)
    record_sent_messages(proxy, hook)
