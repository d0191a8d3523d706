"""What one `bench humaneval` invocation does, with its defaults: the one source the CLI's options read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.loop.errors import BadInputError


@dataclass
class BenchConfig:
    """What one `bench humaneval` invocation does."""

    limit: int | None = None
    """Problems to run (None: all 164 from offset on)."""
    offset: int = 0
    """Index of the first problem."""
    mode: str = "both"
    """single | loop | both (side by side)."""
    max_auto_reply: int = 2
    """Feedback rounds per attempt of the loop (the scenario's max_consecutive_auto_reply)."""
    model: str | None = None
    out: Path | None = None
    resume: bool = False
    attempts: int | None = None
    """Loop: fresh conversations at most (None: the product's StrategyConfig default)."""
    strategy: dict[str, Any] | None = None
    """Other `strategy:` keys for the loop (None: the product's defaults)."""
    only: list[int] | None = None
    """Only these problem numbers (HumanEval/N), within the --offset/--limit slice."""
    separate_single: bool = False
    """both: generate the single pass in its own conversation instead of scoring the loop's first reply."""
    team: bool = False
    """Loop: the built-in Planner → Developer → QA team instead of the pair (run's `--team`)."""

    @property
    def loop_strategy(self) -> dict[str, Any]:
        """The loop's full strategy block as the scenarios get it (product defaults plus overrides)."""
        from agents.bench.humaneval.problem import bench_strategy
        from agents.scenario.strategy_config import StrategyConfig
        from agents.scenario.yamlio import validate

        return validate(StrategyConfig, bench_strategy("loop", self.attempts, self.strategy), "--strategy", {},
                        prefix=("strategy",)).model_dump()

    @property
    def shared_single(self) -> bool:
        """Whether single-pass records come from the loop's first reply."""
        return self.mode == "both" and not self.separate_single

    @property
    def modes(self) -> list[str]:
        """The modes to run, in the order used for even problem indexes."""
        if self.mode not in ("single", "loop", "both"):
            raise BadInputError(f"--mode {self.mode!r}: use single, loop or both")
        if self.team and self.mode != "loop":
            raise BadInputError(f"--team with --mode {self.mode}: the team runs the loop; use --mode loop")
        return ["single", "loop"] if self.mode == "both" else [self.mode]


def parse_only(text: str | None) -> list[int] | None:
    """'10, 32' -> [10, 32]; None or '' -> None (every problem)."""
    items = [t.strip().removeprefix("HumanEval/") for t in (text or "").split(",") if t.strip()]
    if not all(t.isdigit() for t in items):
        raise BadInputError(f"--only {text!r}: use problem numbers, like 10,32")
    return [int(t) for t in items] or None
