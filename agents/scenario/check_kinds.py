"""What every acceptance check kind shares: the registry of kinds, a check's verdict and the base class. The kinds
live in agents/scenario/checks.py and, each in its own module, agents/scenario/check_http.py and
agents/scenario/check_page.py, which import
this module (not agents/scenario/checks.py, which imports them: no import cycle)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.loop.protocols import ExecResult, Executor
from agents.scenario.schema import Kinds, Strict

CHECKS = Kinds()
"""Every check kind by its key."""


@dataclass
class CheckResult:
    """One check's verdict and why."""

    name: str
    passed: bool
    detail: str = ""
    tests_passed: int | None = None
    """For a pytest check: how many of its tests passed (None for other kinds), so two replies that fail the same
    check can still be told apart."""
    tests: int | None = None
    """For a pytest check: how many tests it ran."""
    figures: list[dict[str, Any]] | None = None
    """Images the check made, shown as a block's figures are: a page check's screenshot
    (agents/scenario/check_page.py)."""

    @property
    def judged(self) -> bool:
        """False for an output check that failed only because the block crashed (its output was not looked at)."""
        return self.passed or not self.detail.startswith(NOT_JUDGED)

    def to_dict(self) -> dict[str, object]:
        """Plain dict for transcripts (the test counts only where there are any)."""
        return {k: v for k, v in asdict(self).items() if v is not None}


NOT_JUDGED = "not judged: the last block failed"
"""How an output check's detail starts when the block crashed (CheckResult.judged)."""

Verdict = tuple[bool, str] | tuple[bool, str, int, int] | tuple[bool, str, int, int, list[dict[str, Any]]]
"""What a check's `evaluate` returns: CheckResult's fields after its name."""


class CheckKind(Strict):
    """One kind of check: its only field is its key; `evaluate` judges the last execution and the workspace."""

    def label(self) -> str:
        """`stdout_contains: "24966"` style label."""
        key, value = next(iter(self.model_dump().items()))
        return f"{key}: {value!r}"

    def evaluate(self, last: ExecResult, executor: Executor, base_dir: Path) -> Verdict:
        """(passed, why not) for this execution, and (tests passed, tests run) for a check that runs several tests;
        base_dir is the scenario's folder."""
        raise NotImplementedError
