"""Recognising code that was already executed in this run, so a repeat is re-asked instead of re-run."""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field

from agents.codeblocks import extract_code_blocks


def normalize_code(code: str) -> str:
    """The AST dump of the code (comments, blank lines and formatting do not count), else its stripped lines."""
    try:
        return ast.dump(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError):
        return "\n".join(line.strip() for line in code.splitlines() if line.strip())


def reply_code(content: str | None) -> str | None:
    """The runnable Python of a reply as the proxy would run it (its blocks joined), or None when there is none."""
    blocks = [b.code for b in extract_code_blocks(content) if b.runnable_as == "python"]
    return "\n\n".join(blocks) if blocks else None


def fingerprint(code: str) -> str:
    """A short stable id of the normalized code."""
    return hashlib.sha256(normalize_code(code).encode("utf-8")).hexdigest()[:16]


@dataclass
class Seen:
    """Where a piece of code was executed first, and what it did then."""

    attempt: int
    turn: int
    summary: str

    @property
    def where(self) -> str:
        """'attempt 1, turn 2', or 'in the earlier run' for code the resumed run executed."""
        return f"attempt {self.attempt}, turn {self.turn}" if self.attempt else "in the earlier run"


@dataclass
class RepeatMemory:
    """Every code that ran in this run (across attempts), keyed by its normalized form."""

    seen: dict[str, Seen] = field(default_factory=dict)

    def find(self, content: str | None) -> Seen | None:
        """The earlier execution this reply's code repeats, or None."""
        code = reply_code(content)
        return None if code is None else self.seen.get(fingerprint(code))

    def remember(self, content: str | None, attempt: int, turn: int, summary: str) -> None:
        """Note the code of a reply that was just executed (the first execution wins)."""
        code = reply_code(content)
        if code is not None:
            self.seen.setdefault(fingerprint(code), Seen(attempt, turn, summary))
