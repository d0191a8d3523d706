"""The user proxy: a real AG2 UserProxyAgent whose auto-reply runs the assistant's code in the sandbox."""

from __future__ import annotations

from typing import Any, Callable

from autogen import Agent, UserProxyAgent

from agents.feedback.feedback import Outcome
from agents.feedback.prompts import render
from agents.loop.ag2_adapter import ag2_termination_check, auto_replies_in_a_row, install_proxy_reply
from agents.loop.budget import BudgetSpent, TimeBudget
from agents.loop.protocols import Display, Executor
from agents.loop.repeats import RepeatMemory
from agents.loop.run_reply import run_reply
from agents.loop.termination import RunContext
from agents.loop.turn_policy import TurnPolicy
from agents.scenario.spec import Scenario

HumanInput = Callable[[str, "SandboxProxy"], str]
"""fn(ag2_prompt, proxy) -> what the person typed ('' = Enter, 'exit', 'skip', or free text)."""


class SandboxProxy(UserProxyAgent):
    """UserProxyAgent that executes code through our Executor, runs checks and phrases the feedback."""

    def __init__(self, scenario: Scenario, executor: Executor, context: RunContext, policy: TurnPolicy, *,
                 is_termination_msg: Callable[[dict[str, Any]], bool], human_input_mode: str,
                 max_consecutive_auto_reply: int, human: HumanInput | None = None,
                 display: Display | None = None, memory: RepeatMemory | None = None, attempt: int = 1,
                 budget: TimeBudget | None = None, team: Any = None):
        super().__init__(scenario.user_proxy.name, human_input_mode=human_input_mode,
                         max_consecutive_auto_reply=max_consecutive_auto_reply, code_execution_config=False,
                         is_termination_msg=is_termination_msg, default_auto_reply="")
        self.scenario = scenario
        self.executor = executor
        self.context = context
        self.policy = policy
        """Decides every answer (agents/loop/turn_policy.py); this agent runs code and asks the person."""
        self.human = human
        self.display = display
        self.is_termination = is_termination_msg
        """The predicate AG2 applies to the assistant's messages here (HITL says what Enter will do with it)."""
        self.last_executed: Outcome | None = None
        self.memory = memory if memory is not None else RepeatMemory()
        self.attempt = attempt
        self.budget = budget or TimeBudget(None)
        """The run's wall-clock budget: a block runs at most for what is left of it."""
        self.turns = 0
        """Assistant replies answered so far in this attempt."""
        self.human_answer: str | None = None
        """What the person answered in this check (None: nobody was asked)."""
        self.team = team
        """A team's Planner and QA (agents/loop/team.py): QA reports on every execution that did not succeed."""
        install_proxy_reply(self, self._reply)

    def _reply(self, messages: list[dict[str, Any]] | None, sender: Agent | None, config: Any) -> tuple[bool, Any]:
        """AG2's reply function for the proxy: the turn policy decides; this agent supplies AG2's own check (which
        may ask the person), the person's answer and the run of the reply."""
        def check() -> tuple[bool, Any]:
            self.human_answer = None
            return ag2_termination_check(self, messages, sender, config)

        limit_hit = sender is not None and \
            auto_replies_in_a_row(self, sender) >= self.max_consecutive_auto_reply(sender)
        return self.policy.proxy_reply((messages or [{}])[-1], limit_hit=limit_hit, ag2_check=check,
                                       person_answer=lambda: self.human_answer, run=self.answer)

    def answer(self, content: str) -> tuple[Outcome, Any]:
        """Run the reply (or say why nothing ran), and a team's QA review of an execution that did not succeed (None
        without); predicates learn that the feedback is codeduet's own report. When the time budget runs out while
        the QA writes, the execution is still reported, and so recorded, without the review; the next turn then
        does not start."""
        outcome, review = self.run_turn(content), None
        if self.team is not None and outcome.kind == "executed" and not outcome.success:
            try:
                review = self.team.review(self.scenario.task, content, outcome)
            except BudgetSpent as spent:
                outcome.feedback += f"\n\n(No QA report: {spent}.)"
            if review is not None:  # one structured report under the proxy's, in the same message
                outcome.feedback += "\n\n" + review.content
        self.context.last_outcome = outcome
        self.context.report_contents.add(outcome.feedback)
        return outcome, review

    # -- one turn ----------------------------------------------------------------------------
    def run_turn(self, content: str) -> Outcome:
        """Run the reply in this attempt's sandbox (agents/loop/run_reply.py); code that already ran is not run again,
        its earlier result is said instead."""
        self.turns += 1

        def seen(text: str) -> Outcome | None:
            earlier = self.memory.find(text)
            return None if earlier is None else Outcome("repeat", feedback=earlier.feedback(reask=False))

        outcome = run_reply(content, self.scenario, self.executor, display=self.display, budget=self.budget,
                            seen=seen)
        if outcome.kind == "executed":
            if not any(r.sandbox_lost for r in outcome.results):  # cut off from outside: it may be sent again
                self.memory.remember(content, self.attempt, self.turns, outcome.summary(), outcome.written)
            self.last_executed = outcome
        return outcome

    # -- human input -------------------------------------------------------------------------
    def get_human_input(self, prompt: str, *, iostream: Any = None) -> str:
        """Ask the person through the injected HumanInput; `skip` declines to run the proposed code."""
        if self.human is None:
            return ""
        reply = self.human(prompt, self)
        self.human_answer = reply
        if reply.strip().lower() == "skip":
            reply = render("skipped", note=" Send a different approach, or TERMINATE if the task is done.")
            # Written by the proxy, not the person: like a report, text predicates must not read its TERMINATE.
            self.context.last_outcome = Outcome("skipped", feedback=reply)
            self.context.report_contents.add(reply)
        return reply
