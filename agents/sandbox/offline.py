"""What a shell block's `pip install` meets in a sandbox with no network: one line saying so, and what the image has.

AG2 silences pip's output (`-qqq`); codeduet says what happened instead, so the model stops asking for packages.
"""

from __future__ import annotations

import re

from agents.defaults import SANDBOX_IMAGE
from agents.sandbox.image import PYTHON_PACKAGES

PIP_INSTALL = re.compile(r"^[ \t]*(?:sudo[ \t]+)?(?:python3?[ \t]+-m[ \t]+)?pip3?[ \t]+install\b([^\n;&|]*)", re.M)
"""A command line that is `pip install ...` (also `pip3`, `python -m pip`, after `sudo`)."""


def requested(code: str) -> list[str]:
    """The packages a shell script's `pip install` lines name (options left out), in order; [] when it has none."""
    names: list[str] = []
    for match in PIP_INSTALL.finditer(code):
        names += [w for w in match.group(1).split() if not w.startswith("-") and w not in names]
    return names


def pip_note(code: str, image: str) -> str:
    """The line added under a shell block's output when it runs `pip install` with no network; '' when it does not.
    For codeduet's own image it lists the packages there (and which of those asked for are among them)."""
    if not PIP_INSTALL.search(code):
        return ""
    asked = requested(code)
    what = f"`pip install {' '.join(asked)}`" if asked else "`pip install`"
    if image != SANDBOX_IMAGE:
        return (f"[codeduet: {what} cannot download anything: the sandbox has no network. Use the standard library "
                f"and what the image {image} already has]")
    present = [a for a in asked if re.split(r"[<>=!~\[ ]", a.lower())[0] in PYTHON_PACKAGES]
    note = f"; {', '.join(present)} {'is' if len(present) == 1 else 'are'} already there" if present else ""
    return (f"[codeduet: {what} cannot download anything: the sandbox has no network. Its Python has the standard "
            f"library and {', '.join(PYTHON_PACKAGES)}{note}; use those]")
