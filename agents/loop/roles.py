"""The team's roles, defined once. Every surface reads them from here: the scenario's schema and its checks of a
`team:` list, the team itself (agents/loop/team.py), the transcript, the terminal view, the HTML page, replay,
resume, the exports and the page's task box (tests/test_seams.py: no role name is spelled anywhere else)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Role:
    """One member of a team: the word a scenario and a transcript use for it, and how it is shown."""

    name: str
    style: str
    """rich's style for its messages in the terminal."""


PLANNER = Role("planner", "bright_magenta")
"""Breaks the task into numbered steps, once per attempt."""
DEVELOPER = Role("developer", "green")
"""Writes the code (the pair's assistant)."""
QA = Role("qa", "bright_yellow")
"""After an execution that did not succeed, one structured report to the developer."""

ROLES: tuple[Role, ...] = (PLANNER, DEVELOPER, QA)
"""In speaking order."""
ROLE_NAMES: tuple[str, ...] = tuple(role.name for role in ROLES)
ADVISERS: tuple[str, ...] = tuple(role.name for role in ROLES if role is not DEVELOPER)
"""The members besides the developer: their messages carry their own role in the transcript; the developer's carry
`assistant`, as the pair's do."""
ASSISTANT = "assistant"
"""The transcript's role of the code-writing model's messages (the pair's assistant, the team's developer)."""
MODEL_ROLES: tuple[str, ...] = (ASSISTANT, *ADVISERS)
"""The transcript roles whose messages a model wrote."""
