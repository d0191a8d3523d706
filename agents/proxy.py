"""The user proxy: a real AG2 UserProxyAgent whose auto-reply runs the assistant's code in the sandbox."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Callable

from autogen import Agent, UserProxyAgent

from agents.ag2_adapter import ag2_termination_check, auto_replies_in_a_row, install_proxy_reply
from agents.budget import TimeBudget
from agents.checks import run_checks
from agents.codeblocks import classify_reply, extract_code_blocks
from agents.feedback import Outcome, execution_feedback
from agents.prompts import render
from agents.protocols import Display, Executor
from agents.repeats import RepeatMemory
from agents.scenario import Scenario
from agents.termination import RunContext
from agents.turn_policy import TurnPolicy
from agents.workspace_view import changes, hidden, redefined_modules, snapshot

HumanInput = Callable[[str, "SandboxProxy"], str]
"""fn(ag2_prompt, proxy) -> what the person typed ('' = Enter, 'exit', 'skip', or free text)."""


class SandboxProxy(UserProxyAgent):
    """UserProxyAgent that executes code through our Executor, runs checks and phrases the feedback."""

    def __init__(self, scenario: Scenario, executor: Executor, context: RunContext, policy: TurnPolicy, *,
                 is_termination_msg: Callable[[dict[str, Any]], bool], human_input_mode: str,
                 max_consecutive_auto_reply: int, human: HumanInput | None = None,
                 display: Display | None = None, memory: RepeatMemory | None = None, attempt: int = 1,
                 budget: TimeBudget | None = None):
        super().__init__(scenario.user_proxy.name, human_input_mode=human_input_mode,
                         max_consecutive_auto_reply=max_consecutive_auto_reply, code_execution_config=False,
                         is_termination_msg=is_termination_msg, default_auto_reply="")
        self.scenario = scenario
        self.executor = executor
        self.context = context
        self.policy = policy
        """Decides every answer (agents/turn_policy.py); this agent runs code and asks the person."""
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

    def answer(self, content: str) -> Outcome:
        """Run the reply (or say why nothing ran); predicates learn that its feedback is codeduet's own report."""
        outcome = self.run_turn(content)
        self.context.last_outcome = outcome
        self.context.report_contents.add(outcome.feedback)
        return outcome

    # -- one turn ----------------------------------------------------------------------------
    def run_turn(self, content: str) -> Outcome:
        """Save and run the reply's blocks in order (a `# filename:` block saves its file, and runs it when it is
        Python), stopping at the first failure; then the checks."""
        self.turns += 1
        kind = classify_reply(content)  # an unclosed block (cut off) is incomplete code: never run it
        if kind in ("empty", "unclosed", "no_code"):
            return Outcome(kind, feedback=render(kind))
        blocks = extract_code_blocks(content)
        if kind == "unsupported":
            return Outcome("unsupported", feedback=render("unsupported", language=blocks[0].language))
        runnable = [b for b in blocks if b.actionable]  # Python to run, and files to save (`# filename:`)
        earlier = self.memory.find(content)
        if earlier is not None:  # never run the same code twice: say what it did then
            return Outcome("repeat", feedback=earlier.feedback(reask=False))
        outcome = Outcome("executed")
        workspace = self.executor.workspace
        start = before = snapshot(workspace)
        for block in runnable:
            named = block.filename is not None
            showing = self.display.executing(len(outcome.results) + 1, len(runnable)) if self.display \
                else nullcontext()
            with showing, self.budget.capped(self.executor):
                result = self.executor.execute(block.code, "python" if named else block.runnable_as or "python")
            after = snapshot(workspace)
            result.files, before = changes(before, after), after
            if named and not result.refused and result.filename and not hidden(result.filename):
                outcome.written.append(result.filename)  # (a script named as a data file ran as blockNN.py)
            outcome.results.append(result)
            if result.exit_code != 0 and not (named and result.filename and block is not runnable[-1]):
                break  # a saved module's own run may fail (a CLI without its arguments): the blocks after it test it
        outcome.files = changes(start, before)
        ran = [b.code for b, r in zip(runnable, outcome.results) if b.filename is None and not r.refused]
        outcome.redefined = redefined_modules(workspace, ran, set(outcome.written))
        if outcome.results[-1].exit_code == 0 and self.scenario.checks:
            outcome.checks = run_checks(self.scenario, self.executor, outcome.results[-1])
        outcome.feedback = execution_feedback(outcome, workspace)
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
