"""A Planner → Developer → QA team in place of the single assistant (scenario `team:`).

Built from AG2's classic agents as a nested exchange around the pair, not as a GroupChat: the Developer is the
pair's AssistantAgent, so the sandbox proxy, the checks, candidates, the repeat rule, the time budget, fresh
attempts and the termination predicate work exactly as in the pair; the Planner and the QA agent are AssistantAgents
of their own that the loop asks at fixed points, so the speaking order is deterministic and no speaker-selection
call is spent:

- the **Planner** speaks once, at the start of each attempt: its plan (the numbered steps; the code a small model
  writes into it anyway is dropped, and its whole reply kept as the message's `full_reply`) is recorded and shown
  as its own message, and goes to the Developer under the task (kept in the conversation, never asked again);
- the **Developer** writes code, turn after turn, as the pair's assistant does;
- the **QA** agent speaks after each execution that did not succeed: its message to the Developer is one
  structured report under the proxy's execution report. What failed, the error and the line are taken from the
  execution itself (exact, whatever the model); the QA model adds the hypothesis, one sentence.

A GroupChat would add a manager between every two messages and a speaker choice that a 1.5B model gets wrong; the
nested form keeps every codeduet mechanism on its one code path.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Callable

from autogen import AssistantAgent

from agents.feedback.feedback import error_line
from agents.feedback.prompts import render
from agents.loop.ag2_adapter import quiet_ag2
from agents.loop.protocols import Display, ModelProvider, Recorder
from agents.loop.roles import DEVELOPER, PLANNER, QA
from agents.sandbox.filenames import CHECKS_DIR

TRACEBACK_LINE = re.compile(r'File "(?:/workspace/)?([^"]+)", line (\d+)')
TRACEBACK_START = "Traceback (most recent call last):"
EXCEPTION_NAME = r"[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b"
EXCEPTION = re.compile(rf"^{EXCEPTION_NAME}:?")
CALL_RAISED = re.compile(rf"\braised ({EXCEPTION_NAME}.*?)(?: at: (.+?))?; expected ")
"""A docstring example that raised, as the HumanEval examples check says it: `f(1) raised ValueError: … at: <the
source line>; expected 2`."""
PYTEST_FAILED = re.compile(r"\b\d+ failed\b")
COMPILER_LINE = re.compile(r"^([\w./-]+\.\w+):(\d+)(?::\d+)?: ", re.MULTILINE)
HYPOTHESIS_CHARS, DETAIL_CHARS = 300, 240
QA_MAX_TOKENS = 160
"""Tokens the QA model may write: its one-sentence hypothesis (300 characters kept) with room for a preamble."""
FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
STEP = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?(?:step\s*)?(\d+)[.):]", re.IGNORECASE)
PLAN_STEPS, STEP_CHARS, PROSE_CHARS, TRIED_PLANS = 10, 300, 1200, 2


@dataclass
class RoleTurn:
    """What one role said: its text, usage and time."""

    name: str
    role: str
    content: str
    usage: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def pytest_said(text: str) -> list[str]:
    """pytest's own error lines (`E   ...`: the assertion and what it got), stripped."""
    return [line[1:].strip() for line in text.splitlines() if line.startswith("E ") and line[1:].strip()]


def raised_in(detail: str) -> tuple[str, str] | None:
    """The exception and the line of the tested program's own traceback, when a failed test quotes one (a test that
    ran the program in a subprocess and asserted on its exit code, with its stderr as the message):
    ("AttributeError: 'Namespace' object has no attribute 'level'", "logsum.py line 32")."""
    said = pytest_said(detail)
    start = next((i for i, line in enumerate(said) if line.endswith(TRACEBACK_START)), None)
    if start is None:
        return None
    lines = said[start + 1:]
    lines = lines[:next((i for i, line in enumerate(lines) if line.startswith("assert ")), len(lines))]
    raised = [line for line in lines if EXCEPTION.match(line)]
    if not raised:
        return None
    return raised[-1][:DETAIL_CHARS], own_line(TRACEBACK_LINE.findall("\n".join(lines)), by_name=True)


def raised_by_test(detail: str) -> tuple[str, str] | None:
    """The exception a failed test got from the program itself, in the test's own process (`E   ValueError:
    invalid email`, an ImportError of a name the test needs, a docstring example's call that raised), with its line
    when the detail shows one; None for a failed assertion (the code ran, and its result is wrong)."""
    said = pytest_said(detail)
    example = next((m for m in map(CALL_RAISED.search, said) if m), None)
    if example is not None:  # a docstring example's call raised: its exception and source line, not "the code ran"
        return example.group(1)[:DETAIL_CHARS], example.group(2) or "not shown in the output"
    thrown = next((line for line in said if EXCEPTION.match(line)), None)
    if thrown is None or thrown.startswith("AssertionError"):
        return None
    frames = [(f, n) for f, n in TRACEBACK_LINE.findall(detail) + COMPILER_LINE.findall(detail)
              if not PurePath(f).name.startswith("test_") and CHECKS_DIR not in f]
    return thrown[:DETAIL_CHARS], own_line(frames, by_name=True)


def own_line(frames: list[tuple[str, str]], by_name: bool = False) -> str:
    """The last (file, line) frame of the program's own files, not Python's (`/usr/...`, `<frozen ...>`)."""
    own = [(f, n) for f, n in frames if not f.startswith(("/usr/", "<"))]
    if not own:
        return "not shown in the output"
    path = PurePath(own[-1][0]).name if by_name else own[-1][0]
    return f"{path} line {own[-1][1]}"


def check_detail(detail: str) -> str:
    """A failed check's detail in one line: pytest's own error lines (`E   ...`, the assertion and what it got) when
    there are, not the test's source line that comes first; the program's exception when the test quotes its
    traceback."""
    raised = raised_in(detail)
    if raised is not None:
        return f"the program raised {raised[0]} at {raised[1]}"[:DETAIL_CHARS]
    said = pytest_said(detail)
    if not said:
        return detail.splitlines()[0][:DETAIL_CHARS]
    first, *rest = said[:2]
    return (first + "".join((" " if first.endswith(":") else "; ") + r for r in rest))[:DETAIL_CHARS]


def failure_facts(outcome: Any) -> dict[str, str]:
    """What failed, the error and the line, read from an execution's outcome (no model involved). When the
    Developer's own run exited 0 but a failed test quotes the program's traceback, the error and the line are that
    traceback's; when the Developer's own run was a failing pytest run, the error is what pytest said."""
    failed = [c for c in outcome.checks if not c.passed]
    last = outcome.results[-1] if outcome.results else None
    output = last.output if last else ""
    what = "; ".join(c.name for c in failed[:3]) if failed else (
        f"the run (exit code {last.exit_code})" if last else "nothing ran")
    if failed and failed[0].detail:
        what += f" ({check_detail(failed[0].detail)})"
    frames = TRACEBACK_LINE.findall(output) or COMPILER_LINE.findall(output)
    where = own_line(frames)
    crashed = last is not None and last.exit_code != 0
    detail = (failed[0].detail or "") if failed and not crashed else ""
    raised = (raised_in(detail) or raised_by_test(detail)) if detail else None
    if raised is not None:
        return {"failed": what, "error": raised[0], "line": raised[1]}
    said = pytest_said(output) if crashed and PYTEST_FAILED.search(output) else []
    error = (said[0][:DETAIL_CHARS] if said else error_line(output)) if crashed else \
        "none: the code ran, and its result is wrong"
    return {"failed": what, "error": error, "line": where}


def qa_hypothesis(text: str) -> str:
    """The QA model's hypothesis in one line: its prose, without the code a small model writes anyway (its prompt
    says it never writes code). Code kept in the report, the Developer ran it as its next block; a reply that is
    only code gives no hypothesis."""
    return " ".join(FENCED.sub(" ", text).replace("`", "").split())[:HYPOTHESIS_CHARS] or "none given"


def plan_steps(text: str) -> str:
    """The plan the Developer gets: the Planner's first numbered list, one line a step, without the code a small
    model writes into its plan anyway (its prompt says it never writes code; the Developer writes it). A reply with
    no numbered step keeps its prose, code removed."""
    prose = FENCED.sub("", text)
    steps: list[str] = []
    for line in prose.splitlines():
        number = STEP.match(line)
        if number is None:
            if steps and len(steps) < PLAN_STEPS and line[:1].isspace() and line.strip()[:1] in "-*":
                steps[-1] += "\n   - " + " ".join(line.strip()[1:].split())[:STEP_CHARS]  # a step's own items
            continue
        if len(steps) == PLAN_STEPS or (steps and int(number.group(1)) <= 1):  # a second list (an explanation
            break                                                                # after the plan): the plan ended
        steps.append(" ".join(line.split())[:STEP_CHARS])
    return "\n".join(steps) if steps else " ".join(prose.split())[:PROSE_CHARS]


def plan_ask(task: str, tried: list[tuple[str, str]]) -> str:
    """What the Planner is asked: the task, and on a fresh attempt the last plans tried with what came of them."""
    if not tried:
        return render("team_plan_ask", task=task)
    earlier = "\n\n".join(f"Plan {n}:\n{plan}\nWhat happened: {said}"
                           for n, (plan, said) in enumerate(tried[-TRIED_PLANS:], 1))
    return render("team_replan_ask", task=task, tried=earlier)


class Team:
    """The Planner and the QA agent of one attempt (the Developer is the attempt's assistant)."""

    def __init__(self, roles: list[Any], provider: ModelProvider, providers: Callable[[Any], ModelProvider],
                 recorder: Recorder, display: Display, sink: Callable[[str], Callable[[str], None]],
                 attempt: int, replan: tuple[float, int, float] | None = None):
        """`replan`: (temperature, seed, top_p) of a fresh attempt's Planner (None: its model's own setting)."""
        self.recorder, self.display, self.attempt = recorder, display, attempt
        self.plan_sampling: dict[str, Any] = {}
        self.developer = next((r.name for r in roles if r.role == DEVELOPER.name), DEVELOPER.name)
        self.agents: dict[str, tuple[Any, Any, ModelProvider]] = {}
        for role in roles:
            if role.role == DEVELOPER.name:
                continue
            own = providers(role.model) if role.model is not None else provider
            llm_config = own.llm_config()
            entry = llm_config["config_list"][0]  # (AG2 passes a config entry's keys to create())
            if role.role == PLANNER.name and replan is not None:
                self.plan_sampling = own.sampling_params(*replan)
                entry.update(self.plan_sampling)
            if role.role == QA.name:  # one sentence is kept: the rest would be decoded for nothing (a model
                configured = getattr(own.config, "max_tokens", None)  # set lower keeps its own limit)
                entry["max_tokens"] = min(configured or QA_MAX_TOKENS, QA_MAX_TOKENS)
            with quiet_ag2():
                agent = AssistantAgent(role.name, llm_config=llm_config, human_input_mode="NEVER",
                                       system_message=role.system_text or render(f"team_{role.role}"))
            own.attach(agent, on_token=sink(role.name))
            self.agents[role.role] = (agent, role, own)

    def has(self, role: str) -> bool:
        return role in self.agents

    def _ask(self, role: str, prompt: str) -> RoleTurn:
        """One reply of a role to `prompt`, with its usage and time (the display shows it being written)."""
        agent, config, provider = self.agents[role]
        self.display.generation_started(config.name)
        started = time.perf_counter()
        with quiet_ag2():
            reply = agent.generate_reply(messages=[{"role": "user", "content": prompt}])
        text = (reply.get("content") if isinstance(reply, dict) else reply) or ""
        usage = provider.pop_usage()
        return RoleTurn(config.name, role, str(text).strip(), usage.to_dict() if usage else {},
                        round(time.perf_counter() - started, 3))

    def record(self, turn: RoleTurn, **extra: Any) -> None:
        """A role's message into the events and onto the display (its usage carries its time)."""
        event = {"sender": turn.name, "recipient": self.developer, "content": turn.content, "attempt": self.attempt,
                 "role": turn.role, "usage": {**turn.usage, "seconds": turn.seconds}, **extra}
        self.recorder.event("message", **event)
        self.display.on_message(event)

    def plan(self, task: str, tried: list[tuple[str, str]] | None = None) -> RoleTurn | None:
        """The Planner's ordered subtasks for the task, recorded (None without a Planner). `tried`: the plans of
        earlier attempts and how each ended; the Planner is asked for a new one (asked the same, a greedy model
        gives the same plan, and the Developer repeats the same mistake)."""
        if not self.has(PLANNER.name):
            return None
        turn = self._ask(PLANNER.name, plan_ask(task, tried or []))
        whole, turn.content = turn.content, plan_steps(turn.content) or turn.content
        self.record(turn, **({"full_reply": whole} if turn.content != whole else {}),
                    **({"sampling": self.plan_sampling} if self.plan_sampling else {}))
        return turn

    def review(self, task: str, code: str, outcome: Any) -> RoleTurn | None:
        """The QA report on an execution that did not succeed (None without a QA agent): the facts, then the QA
        model's hypothesis, as one structured message; recorded after the execution (`record`)."""
        if not self.has(QA.name):
            return None
        facts = failure_facts(outcome)
        asked = render("team_qa_ask", task=task, code=code[-3000:], report=outcome.feedback[-3000:], **facts)
        turn = self._ask(QA.name, asked)
        hypothesis = qa_hypothesis(turn.content)
        turn.content = render("team_qa_report", who=turn.name, hypothesis=hypothesis, **facts)
        return turn
