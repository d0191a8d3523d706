"""The self-debug strategy: greedy first turn, sampled repair turns, repeats re-asked hotter, fresh attempts (which
attempt a run keeps: agents/loop/attempt_summary.py).

One strategy serves `run`, `chat`, `--resume`, batches and the benchmarks; a scenario's `strategy:` block sets it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.feedback.prompts import render
from agents.loop.attempt_summary import AttemptSummary
from agents.loop.repeats import Seen
from agents.scenario.strategy_config import StrategyConfig

MAX_TEMPERATURE = 1.5


@dataclass
class Sampling:
    """How one model call samples: None temperature means the model entry's own setting."""

    temperature: float | None
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """For transcripts."""
        return {"temperature": self.temperature, "seed": self.seed}


class SamplingPolicy:
    """Which temperature and seed each call of one attempt gets."""

    def __init__(self, config: StrategyConfig, attempt: int, reask_no_code: bool = True):
        self.config = config
        self.attempt = attempt
        self.reask_no_code = reask_no_code
        """Re-ask a reply with neither code nor TERMINATE (off while a person steers: they may ask for prose)."""
        self.turn = 0
        self.last: dict[str, Any] | None = None
        """The sampling of the reply that was kept last (the recorder puts it on the message)."""

    def next_turn(self) -> int:
        """Count a new assistant turn of this attempt; returns its number (1-based)."""
        self.turn += 1
        return self.turn

    def sampling(self, turn: int, resample: int) -> Sampling:
        """Greedy (entry setting) for the first turn of attempt 1; sampled otherwise; hotter on each re-ask."""
        cfg = self.config
        seed = cfg.seed + 10_000 * self.attempt + 100 * turn + resample
        if turn == 1:
            base = None if self.attempt == 1 else cfg.attempt_temperature
        else:
            base = cfg.repair_temperature or None
        if resample == 0:
            return Sampling(base, seed)
        start = base if base is not None else (cfg.repair_temperature or cfg.attempt_temperature or 0.7)
        return Sampling(min(MAX_TEMPERATURE, start + cfg.resample_step * (resample - 1)), seed)


    def candidate(self, turn: int, k: int, resample: int = 0) -> Sampling:
        """Candidate k (0-based) of a turn or of its re-ask: k=0 is sampled as the call alone would be (greedy on
        the first turn of the first attempt); the others at the attempt (first turn) or repair temperature, or at
        the re-ask's own, each with its own seed (apart from every re-ask's)."""
        first = self.sampling(turn, resample)
        if k == 0:
            return first
        cfg = self.config
        temperature = first.temperature if resample else \
            (cfg.attempt_temperature if turn == 1 else cfg.repair_temperature) or 0.7
        return Sampling(temperature, first.seed + 50 + k + 1_000_000 * resample)  # a re-ask's far from any call's


def reask_messages(history: list[dict[str, Any]], reason: str, content: str, earlier: Seen | None,
                   config: StrategyConfig) -> list[dict[str, Any]]:
    """What a re-ask is asked with. A repeat is shown back with what it did; a prose reply (a diagnosis or a plan) is
    kept and its script asked for (prose_reply: keep); a looping reply is dropped, since it would be copied. The
    re-ask exchange is recorded as an event, not kept in the conversation's history."""
    if reason == "repeat":
        follow_up = earlier.feedback(reask=True)
    elif reason == "no_code" and config.prose_reply == "keep":
        follow_up = render("prose_followup")
    else:
        return history
    return [*history, {"role": "assistant", "content": content}, {"role": "user", "content": follow_up}]


def compact(history: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """What a turn is asked with: the whole conversation ("full"), or the task, the last reply and the feedback on
    it ("last"), so older failed scripts are not there to be copied back."""
    if mode == "full" or len(history) <= 3:
        return history
    return [history[0], *history[-2:]]


SUMMARY_LINES = 3
"""Earlier attempts named in a fresh attempt's first message: the latest ones (a run with a time budget may have
many attempts, and a long list of old failures costs prompt time and buries the task)."""


def attempt_message(task: str, attempt: int, history: list[AttemptSummary], config: StrategyConfig) -> str:
    """The first message of a fresh attempt: the task, plus one line on what failed in each of the latest earlier
    attempts."""
    if attempt == 1 or not config.summary or not history:
        return task
    lines = "\n".join(f"- attempt {h.attempt}: {h.summary}" for h in history[-SUMMARY_LINES:])
    return render("attempt_task", task=task.rstrip(), failures=lines)

