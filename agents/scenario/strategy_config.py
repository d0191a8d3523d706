"""The scenario's `strategy:` block: how the loop spends its budget (agents/loop/strategy.py,
agents/loop/turn_policy.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from agents.scenario.schema import Strict

DEFAULT_ATTEMPTS = 3
"""`attempts: auto` without a time budget."""
MAX_ATTEMPTS = 50


def count_or_auto(v: Any, high: int, what: str) -> Any:
    """A count from 1 to `high`, or "auto" (a bool is not a count)."""
    if v == "auto" or (isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= high):
        return v
    raise ValueError(f"{v!r} is not a number of {what}: use a count from 1 to {high}, or auto")


class StrategyConfig(Strict):
    """How the loop spends its budget: sampled repair turns, rejected repeats and fresh attempts."""

    attempts: int | Literal["auto"] = "auto"
    """Fresh conversations at most (1 to 50); the run ends at the first whose execution passes every check. `auto`:
    3, or, when the run has a time budget (`max_seconds`), as many as the budget leaves time to start (at most
    50): with the embedded model most successes come from the first turn of an attempt (its candidates), not from
    its repair turns, so time a run was given is spent on fresh attempts instead of ending early."""
    repair_temperature: float = Field(default=0.7, ge=0, le=2)
    """Sampling temperature of repair turns (0: greedy). The first turn of the first attempt is always greedy."""
    attempt_temperature: float = Field(default=0.7, ge=0, le=2)
    """Sampling temperature of the first turn of attempts 2..N."""
    max_resamples: int = Field(default=1, ge=0, le=20)
    """Re-asks of a turn whose reply was cut off inside its code block or (unattended) held only prose, each with a
    new seed and, from the second on, hotter."""
    repeat_reasks: int = Field(default=0, ge=0, le=20)
    """Re-asks of a turn whose code repeats an earlier execution, each shown its repeat and what that code did.
    0 (the default): the proxy answers the repeat without running it, the conversation is stuck, and a fresh
    attempt takes over at once. Measured with 1 (docs/BENCHMARKS.md): of 48 re-asked repeats the embedded 1.5B
    model sent the same code again in most, and none of the others passed more checks; each cost a reply's time."""
    resample_step: float = Field(default=0.2, ge=0, le=1)
    """How much hotter each re-ask is (capped at 1.5)."""
    seed: int = Field(default=0, ge=0)
    """Base seed: every sampled call gets its own seed from it, so a run is reproducible."""
    summary: bool = True
    """Start a fresh attempt with one line on what failed before."""
    top_p: float = Field(default=0.95, gt=0, le=1)
    """Nucleus cut-off of sampled turns."""
    repair_context: Literal["full", "last"] = "full"
    """What a repair turn sees: the whole conversation, or only the task, the last reply and the feedback on it."""
    prose_reply: Literal["keep", "reask"] = "keep"
    """A reply with neither code nor TERMINATE (unattended runs): `keep` re-asks with that reply kept and a request
    for the script it describes (a diagnosis or a plan is built on, the self-debugging pattern); `reask` asks again
    from the clean prompt, as if the reply had not been given."""
    max_seconds: float | None = Field(default=None, gt=0, le=7 * 24 * 3600)
    """Wall-clock budget of the whole run, in seconds (None: none; `--max-seconds` overrides). When it is spent, the
    generation or block under way stops, the run ends with the status `timeout`, and everything is saved."""
    candidates: int | Literal["auto"] = "auto"
    """Replies generated together for the first turn of every attempt, each run in its own fresh sandbox on a copy
    of the workspace and scored by the checks (agents/loop/candidates.py); the best one continues the conversation. The
    first stays greedy, the others are sampled with their own seeds. `auto`: 4 with the embedded llama.cpp model
    (decoded in one batch), 1 with any other (each candidate is a paid request; the scripted model replays its
    list). Only unattended runs (human_input_mode NEVER): a person approves what runs."""
    repair_candidates: int = Field(default=1, ge=1, le=16)
    """Replies generated together for each repair turn (1: one, as before). Measured with 4 on five near-miss
    scenarios (docs/BENCHMARKS.md, machine O): no new success, each repair turn about three times as long."""
    reask_candidates: int | Literal["auto"] = 1
    """Replies generated together when a turn is asked again (its reply repeated code that already ran, was cut
    off, or held only prose), chosen among as the first turn's are: several re-samples, each run, instead of one.
    `auto`: the first turn's count (`candidates`). Default 1 (one re-ask at a time): measured with 4 under a 600 s
    budget (docs/BENCHMARKS.md), the embedded model repeated itself in most of them too, and the time they took
    cost fresh attempts."""
    candidates_state: Literal["attempt", "scratch"] = "attempt"
    """In a kernel session (sandbox.session kernel), what each candidate's own kernel holds before its reply runs:
    attempt: the attempt's state, rebuilt by running the files the attempt's kernel ran (output dropped); scratch: a
    fresh interpreter, as in process mode (docs/BENCHMARKS.md, "Kernel sessions", compares them)."""
    candidates_early_stop: bool = True
    """The turn's own reply (candidate 1) runs first; when it passes every check, the other candidates are not
    generated (a first-turn success costs what it cost without candidates). false: all N are always generated, so
    agreement can choose among several that pass every visible check (scenarios with no checks always get all N)."""

    @field_validator("candidates", "reask_candidates", mode="before")
    @classmethod
    def _count_or_auto(cls, v: Any) -> Any:
        return count_or_auto(v, 16, "candidates")

    @field_validator("attempts", mode="before")
    @classmethod
    def _attempts_or_auto(cls, v: Any) -> Any:
        return count_or_auto(v, MAX_ATTEMPTS, "attempts")

    def attempt_limit(self) -> int:
        """How many fresh attempts a run may start (`auto` resolved: 3, or up to 50 while a time budget lasts)."""
        if self.attempts != "auto":
            return int(self.attempts)
        return MAX_ATTEMPTS if self.attempts_until_budget() else DEFAULT_ATTEMPTS

    def attempts_until_budget(self) -> bool:
        """True when fresh attempts go on until the time budget is spent (`attempts: auto` with max_seconds)."""
        return self.attempts == "auto" and self.max_seconds is not None
    file_preview: int = Field(default=30, ge=0, le=10_000)
    """Lines of each `files:` entry shown under the task in every attempt's first message (0: none), so the model
    sees the data it must handle instead of guessing its format (at most 4,000 characters in all)."""
