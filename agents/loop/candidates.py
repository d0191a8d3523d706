"""Several candidate replies for one turn, each run in its own fresh sandbox, and the choice between them.

The one lever measured to lift 1.5B models is sampling several answers and keeping the one that execution prefers
(S*, AlphaCode, MBR-exec; docs/STRATEGY.md). The turn policy asks the model for N replies at once (the first as the
turn would be asked alone, the others sampled with their own seeds); the ones the policy would re-ask anyway (a
repeat, a cut reply, prose) are set aside; each other one runs through the proxy's own code (agents/loop/run_reply.py)
in a fresh sandbox on a copy of the attempt's workspace, so nothing is shared between candidates; then:
1. the one that passes the most checks wins (every check: the scenario is solved);
2. then the one that passes the most tests of the pytest checks (two replies that fail the same check are told
   apart by how much of it they get right);
3. then one whose last block ran clean (exit 0, or a command-line tool's usage line);
4. then agreement: candidates whose runs printed the same output form a cluster, and the largest cluster wins
   (what decides when there are no checks, or when several pass every visible check, as in HumanEval);
5. then the earlier candidate (the first is the turn's own reply).
The winner is the reply the conversation continues with: the proxy runs it again in the attempt's sandbox and the
model sees that report. Every candidate is recorded as a `candidate` event (code, sampling, outcome, score).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from agents.feedback.feedback import Outcome
from agents.loop.budget import TimeBudget
from agents.loop.protocols import Usage
from agents.loop.run_reply import run_reply
from agents.record.run_folder import CANDIDATES_DIR, candidate_name
from agents.sandbox import make_executor
from agents.scenario.spec import Scenario


@dataclass
class Candidate:
    """One of a turn's candidate replies and what became of it."""

    index: int
    """1-based; 1 is the reply the turn would have had alone."""
    content: str
    sampling: dict[str, Any]
    usage: Usage | None = None
    rejected: str | None = None
    """Why it was set aside without running (repeat | cut | no_code), or None."""
    outcome: Outcome | None = None
    agree: int = 0
    """How many candidates (itself included) printed the same output."""
    workspace: str | None = None
    """Its workspace folder, relative to the run folder."""
    chosen: bool = False
    deferred: int | None = None
    """Set on candidate 1 when it only sent the given files back unchanged: the turn the others were asked at."""
    budget_spent: bool = False
    """Set on candidate 1 when the run's time budget ran out while the others were generated (none of them ran)."""

    def score(self) -> tuple[int, int, int, int, int]:
        """(every check passed, checks passed, tests the pytest checks passed, ran clean, agreement); higher is
        better."""
        o = self.outcome
        if o is None or o.kind != "executed":
            return (0, 0, 0, 0, 0)
        return (1 if o.checks and o.success else 0, o.checks_passed, o.tests_passed, 1 if o.ran_clean else 0,
                self.agree)

    def to_event(self) -> dict[str, Any]:
        """The `candidate` event's fields."""
        event: dict[str, Any] = {"index": self.index, "content": self.content, "sampling": self.sampling,
                                 "chosen": self.chosen}
        if self.usage is not None:
            event["usage"] = self.usage.to_dict()
        if self.rejected:
            event["rejected"] = self.rejected
        if self.outcome is not None:
            event["outcome"] = self.outcome.to_dict()
            event["score"] = dict(zip(("solved", "checks_passed", "tests_passed", "ran_clean", "agree"),
                                      self.score()))
            if self.outcome.tests:
                event["score"]["tests"] = self.outcome.tests
        if self.workspace:
            event["workspace"] = self.workspace
        if self.deferred:
            event["deferred"] = self.deferred
        if self.budget_spent:
            event["budget_spent"] = True
        return event


def output_key(outcome: Outcome | None) -> str | None:
    """What a candidate's run printed, normalised (line ends and trailing spaces), with its exit codes; None when
    nothing ran. Two candidates with the same key computed the same thing on the task's own inputs."""
    if outcome is None or outcome.kind != "executed" or not outcome.results:
        return None
    lines = [f"exit {r.exit_code}\n" + "\n".join(ln.rstrip() for ln in r.output.strip().splitlines())
             for r in outcome.results if not r.saved_only]
    return "\n--\n".join(lines)


def count_agreement(candidates: list[Candidate]) -> None:
    """Set each candidate's `agree`: the size of its cluster of identical outputs."""
    keys = [output_key(c.outcome) for c in candidates]
    for c, key in zip(candidates, keys):
        c.agree = sum(1 for k in keys if k is not None and k == key)


def choose(candidates: list[Candidate]) -> Candidate:
    """The best candidate that ran (module docstring), else the first one."""
    ran = [c for c in candidates if c.outcome is not None]
    best = max(ran, key=lambda c: (c.score(), -c.index)) if ran else candidates[0]
    best.chosen = True
    return best


def describe(c: Candidate, checks: int) -> str:
    """One line on a candidate, for the terminal."""
    if c.rejected:
        return f"candidate {c.index}: set aside ({c.rejected})"
    o = c.outcome
    if o is None:
        return f"candidate {c.index}: not run (the time budget was spent)"
    if o.kind != "executed":
        return f"candidate {c.index}: nothing ran ({o.kind})"
    tests = f" ({o.tests_passed}/{o.tests} tests)" if o.tests > 1 else ""
    passed = f"{o.checks_passed}/{checks} checks{tests}, " if checks else ""
    last = o.results[-1].exit_code if o.results else None
    agree = f", same output as {c.agree - 1} other(s)" if c.agree > 1 else ""
    return f"candidate {c.index}: {passed}exit {last}{agree}" + (" (chosen)" if c.chosen else "")


@dataclass
class CandidateRunner:
    """Runs candidates for one attempt: each in a fresh sandbox on a copy of the attempt's workspace."""

    scenario: Scenario
    run_dir: Path
    run_id: str
    attempt: int
    workspace: Path
    budget: TimeBudget = field(default_factory=lambda: TimeBudget(None))
    started: Callable[[str], None] | None = None
    """Told the name of each sandbox before it starts (tests and the display)."""
    session_state: Callable[[], list[str]] | None = None
    """In a kernel session: the files the attempt's kernel has run, which each candidate's fresh kernel runs first
    (output dropped), so a candidate starts from the attempt's variables, as the reply it competes to be would."""

    def __call__(self, turn: int, candidates: list[Candidate], resample: int = 0) -> None:
        """Run every candidate not set aside, in order; fill in its outcome and workspace."""
        for c in candidates:
            if c.rejected or self.budget.spent():
                continue
            name = candidate_name(self.attempt, turn, c.index, resample)
            folder = self.run_dir / CANDIDATES_DIR / name
            shutil.copytree(self.workspace, folder, symlinks=True)
            executor = make_executor(self.scenario.sandbox, folder, f"{self.run_id}-{name}")
            if self.started:
                self.started(name)
            try:
                executor.start()
                if self.session_state is not None:
                    with self.budget.capped(executor):
                        executor.restore(self.session_state())
                c.outcome = run_reply(c.content, self.scenario, executor, budget=self.budget)
            finally:
                executor.stop()
            c.workspace = f"{CANDIDATES_DIR}/{name}"
