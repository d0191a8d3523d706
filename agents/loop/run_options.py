"""What one invocation overrides in a scenario, and where its run goes: built by the CLI before AG2 is imported."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agents.loop.errors import BadInputError


@dataclass
class RunOptions:
    """Per-invocation overrides of the scenario and where things go."""

    model: str | dict[str, Any] | None = None
    max_auto_reply: int | None = None
    human: str | None = None
    workspaces: Path | None = None
    attempts: int | None = None
    """Override the scenario's strategy.attempts."""
    max_seconds: float | None = None
    """Override the scenario's strategy.max_seconds (the run's wall-clock budget)."""
    languages: list[str] | None = None
    """Languages added to the scenario's sandbox.languages (`--languages c,go`)."""
    session: str | None = None
    """Override the scenario's sandbox.session: process | kernel (`--session kernel`)."""
    team: bool = False
    """`--team`: a scenario without a `team:` runs with the built-in Planner → Developer → QA team."""
    baseline: bool = False
    """`--baseline`: the paper's static baseline: the same model, one reply run once, no decomposition, no
    feedback (one attempt, one candidate, no re-asks, max_consecutive_auto_reply 0, no team)."""
    history: list[dict[str, Any]] = field(default_factory=list)
    """Prior messages ({sender_role: assistant|user_proxy, content}) to seed, for resume."""
    parent: dict[str, Any] | None = None
    first_message: str | None = None
    kernel_restore: list[tuple[str, str]] = field(default_factory=list)
    """For a resumed kernel session: the files (name, text) its parent's kernel ran, which the new kernel runs first
    (agents/replay/resume.py kernel_restore)."""


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`--strategy KEY=VALUE` flags -> {key: value} for StrategyConfig (values read as YAML):
    ['repair_context=last', 'attempts=4'] -> {'repair_context': 'last', 'attempts': 4}."""
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadInputError(f"--strategy {item!r}: use KEY=VALUE, like repair_context=last")
        pairs[key.strip()] = yaml.safe_load(value)
    return pairs
