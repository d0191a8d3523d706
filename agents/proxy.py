"""The user proxy: a real AG2 UserProxyAgent whose auto-reply runs the assistant's code in the sandbox."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable

from autogen import Agent, ConversableAgent, UserProxyAgent

from agents.ag2_adapter import auto_replies_in_a_row
from agents.budget import TimeBudget
from agents.checks import run_checks
from agents.codeblocks import classify_reply, extract_code_blocks
from agents.feedback import Outcome, execution_feedback
from agents.prompts import render
from agents.protocols import Display, Executor
from agents.repeats import RepeatMemory
from agents.scenario import Scenario
from agents.termination import RunContext
from agents.workspace_view import changes, hidden, redefined_modules, snapshot

HumanInput = Callable[[str, "SandboxProxy"], str]
"""fn(ag2_prompt, proxy) -> what the person typed ('' = Enter, 'exit', 'skip', or free text)."""


@dataclass
class ProxyTurn:
    """A message the proxy produced, as it knows it: who wrote it and, for a report, what happened."""

    role: str
    """execution (a report on code that ran) | user_proxy (a nudge, a repeat notice) | human (a person's answer)"""
    outcome: Outcome | None = None
    """What the reply's code did (None for a person's answer)."""


class SandboxProxy(UserProxyAgent):
    """UserProxyAgent that executes code through our Executor, runs checks and phrases the feedback."""

    def __init__(self, scenario: Scenario, executor: Executor, context: RunContext, *,
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
        self.human = human
        self.display = display
        self.is_termination = is_termination_msg
        """The termination predicate this proxy applies to the assistant's messages."""
        self.stop_reason: str | None = None
        self.produced: ProxyTurn | None = None
        """The reply this proxy produced and AG2 is about to send (taken by the recorder when it is sent)."""
        self.last_executed: Outcome | None = None
        self.memory = memory if memory is not None else RepeatMemory()
        self.attempt = attempt
        self.budget = budget or TimeBudget(None)
        """The run's wall-clock budget: a block runs at most for what is left of it."""
        self.turns = 0
        """Assistant replies answered so far in this attempt."""
        self.prose_seen: set[str] = set()
        """Replies without code answered so far in this attempt (whitespace-normalised)."""
        self.final_turn = False
        """The reply limit was reached on a reply with code: it runs, its report is sent, then the run ends."""
        self.human_answer: str | None = None
        """What the person answered in this check (None: nobody was asked)."""
        self.replace_reply_func(ConversableAgent.check_termination_and_human_reply, SandboxProxy._reply)

    def take_turn(self) -> ProxyTurn | None:
        """The record of the reply being sent, once (None for a message no reply function produced: the task)."""
        turn, self.produced = self.produced, None
        return turn

    # -- AG2 reply function ------------------------------------------------------------------
    def _reply(self, messages: list[dict[str, Any]] | None = None, sender: Agent | None = None,
               config: Any = None, **kwargs: Any) -> tuple[bool, Any]:
        """In place of AG2's check_termination_and_human_reply: that check (ending, or a person's answer), else the
        sandbox runs the reply's code. Every message the proxy sends after the task comes from here."""
        final, reply = self._check_termination(messages, sender, config)
        if final:
            if reply is not None:  # a person answered (skip included): their answer is sent instead of running code
                self.produced = ProxyTurn("human" if self.human_answer else "user_proxy")
            return final, reply
        return self._execute_reply(messages, sender, config)

    def _check_termination(self, messages: list[dict[str, Any]] | None = None, sender: Agent | None = None,
                           config: Any = None, **kwargs: Any) -> tuple[bool, Any]:
        """AG2's own check, plus a note of why the run stopped."""
        limit_hit = sender is not None and auto_replies_in_a_row(self, sender) >= \
            self.max_consecutive_auto_reply(sender)
        predicate = bool(messages) and self.is_termination((messages or [{}])[-1])
        if limit_hit and not predicate and self.human_input_mode == "NEVER" and not self.final_turn \
                and extract_code_blocks((messages or [{}])[-1].get("content")):
            # the last reply the limit allows still runs (a generated reply is never dropped unexecuted);
            # the assistant then ends the conversation on its report instead of asking the model again
            self.final_turn = True
            self.stop_reason = "max_replies"
            return False, None
        self.human_answer = None
        final, reply = ConversableAgent.check_termination_and_human_reply(self, messages, sender, config)
        if final and reply is None and self.stop_reason is None:
            if self.human_answer is not None:  # the person was asked, and their answer ended the conversation
                self.stop_reason = "human_exit"
            else:
                self.stop_reason = "predicate" if predicate else ("max_replies" if limit_hit else "human_exit")
        return final, reply

    def _execute_reply(self, messages: list[dict[str, Any]] | None = None, sender: Agent | None = None,
                       config: Any = None) -> tuple[bool, str]:
        """Run the code in the last message (or say why nothing ran); the reply is the feedback."""
        content = (messages or [{}])[-1].get("content") or ""
        outcome = self.run_turn(content)
        stuck = None
        if outcome.kind == "repeat":  # every re-ask came back with code that already ran
            stuck = "stuck"
        elif outcome.kind == "no_code":  # the same prose as before, after a nudge: the model loops, it does not work
            key = " ".join(content.split())
            stuck = "prose_loop" if key in self.prose_seen else None
            self.prose_seen.add(key)
        if stuck and self.human_input_mode != "ALWAYS" and not self.final_turn:
            # this conversation is stuck: its report is the last message and a fresh attempt (if any are left)
            # takes over
            self.final_turn = True
            self.stop_reason = stuck
        self.produced = ProxyTurn("execution" if outcome.kind == "executed" else "user_proxy", outcome)
        self.context.last_outcome = outcome
        self.context.report_contents.add(outcome.feedback)
        return True, outcome.feedback

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
