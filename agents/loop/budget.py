"""A run's wall-clock budget (strategy.max_seconds, --max-seconds): when it is spent, the generation under way stops
at its next token or prompt-evaluation beat, a block or check running now is cut at the budget's end, and no new
turn or attempt starts."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Iterator

from agents.loop.protocols import Executor, TokenSink


class BudgetSpent(Exception):
    """The run's time budget ran out; `where` says what it was doing ("while generating turn 3 of attempt 2")."""

    def __init__(self, seconds: float, where: str):
        super().__init__(f"the time budget of {seconds:g} s ran out {where}")
        self.seconds, self.where = seconds, where


class TimeBudget:
    """Seconds a run may take, counted from its start; None: no limit."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.started = time.monotonic()

    def remaining(self) -> float | None:
        """Seconds left (never below 0), or None without a budget."""
        if self.seconds is None:
            return None
        return max(0.0, self.seconds - (time.monotonic() - self.started))

    def spent(self) -> bool:
        """Whether nothing is left."""
        left = self.remaining()
        return left is not None and left <= 0

    def check(self, where: str) -> None:
        """Raise BudgetSpent when nothing is left."""
        if self.spent():
            raise BudgetSpent(self.seconds or 0, where)

    def guard(self, sink: TokenSink | None, where: Any) -> TokenSink | None:
        """A token sink that stops the streaming generation once the budget is spent; `where()` describes it."""
        if self.seconds is None:
            return sink

        def on_token(text: str) -> None:
            if self.spent():
                raise BudgetSpent(self.seconds or 0, where())
            if sink is not None and text:  # an empty piece is a heartbeat, with nothing to show
                sink(text)

        on_token.stops = True  # type: ignore[attr-defined]  # a sink worth beating for (can_stop)
        return on_token

    @contextmanager
    def capped(self, executor: Executor) -> Iterator[None]:
        """Run blocks and checks with their timeouts cut to what is left of the budget (at least 1 s): the
        executor's `deadline` (agents/loop/protocols.py) is the budget's end meanwhile."""
        if self.seconds is None:
            yield
            return
        before = executor.deadline
        executor.deadline = self.started + self.seconds
        try:
            yield
        finally:
            executor.deadline = before


def can_stop(sink: TokenSink | None) -> bool:
    """Whether `sink` is a time budget's guard (it may raise BudgetSpent): only then are beats worth their cost."""
    return bool(getattr(sink, "stops", False))


def beats_only(sink: TokenSink | None) -> TokenSink | None:
    """The sink for a reply that does not stream (a candidate after the first): only beats reach `sink`, so a
    budget's guard still stops it; it can stop when `sink` can."""
    if sink is None:
        return None

    def beat(_piece: str) -> None:
        sink("")

    beat.stops = can_stop(sink)  # type: ignore[attr-defined]
    return beat


def clamp(limit: float, deadline: float | None) -> float:
    """`limit` seconds, cut to what is left before `deadline` (a time.monotonic() instant; None: no cut), at
    least 1 s."""
    if deadline is None:
        return limit
    return min(limit, max(1, int(deadline - time.monotonic()) + 1))
