"""Prompt and feedback templates, kept as files next to this module."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from string import Template

HERE = Path(__file__).parent
PROMPT_VERSION = "v4"
"""v4: a prose-only reply is kept and the code it describes asked for (prose_followup). v3: repair feedback asks for one sentence on the faulty line before the script. v2: closest output line for failed stdout checks, repeat and cut-reply re-asks, fresh-attempt task (strategy)."""


@lru_cache(maxsize=None)
def template(name: str) -> Template:
    """Load `name.md` as a string.Template ($var placeholders)."""
    return Template((HERE / f"{name}.md").read_text(encoding="utf-8"))


def render(name: str, **values: object) -> str:
    """Fill a template; unknown placeholders are left as they are."""
    return template(name).safe_substitute({k: str(v) for k, v in values.items()}).strip()


def system_message() -> str:
    """The default self-debug system message for small local models."""
    return render("system")
