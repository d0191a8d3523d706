"""Loops with a long period: a reply whose last lines repeat the block of lines before them, and its salvage.

A small model sometimes writes its script and then repeats a block (a dozen asserts, say) until max_tokens. At each
line boundary `find_loop` compares the last k complete lines with the k lines before them, for every k up to half
the reply; the criterion is exact equality of whole windows of lines, never similarity. It fires only when the
repeat is too long to be written on purpose (thresholds below). `salvage` keeps the text up to the end of the first
copy and closes its code fence; that is the reply when its Python parses, otherwise the reply stays cut (re-asked).

Thresholds, in characters of the repeated copies with whitespace stripped (indentation and blank lines count 0):
- MIN_REPEAT_CHARS (200): the copies after the first must hold at least this much. Two similar asserts, a few equal
  rows of a table, `print()` twice: far below it.
- Three copies for any period; two copies only for a block of at least LONG_BLOCK_LINES lines and LONG_BLOCK_CHARS
  characters: four or more identical lines of 200+ characters written twice in a row is not something a script
  does on purpose, and waiting for a third copy of a 12-line block costs another ~100 tokens.
A block of blank lines alone never fires. The short-piece detector is `looping`.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import Any

from agents.loop.codeblocks import extract_code_blocks, is_unclosed

MIN_REPEAT_CHARS = 200
LONG_BLOCK_LINES = 4
LONG_BLOCK_CHARS = 200


@dataclass
class Loop:
    """A block of `period` lines written `copies` times in a row at the end of a reply."""

    period: int
    copies: int
    keep: int
    """Characters up to the end of the first copy (what a salvage keeps)."""
    block_chars: int
    """Non-whitespace characters in one copy."""


def fires(period: int, copies: int, block_chars: int) -> bool:
    """Whether `copies` of a `period`-line block with `block_chars` characters is a loop (thresholds above)."""
    if (copies - 1) * block_chars < MIN_REPEAT_CHARS:
        return False
    return copies >= 3 or (period >= LONG_BLOCK_LINES and block_chars >= LONG_BLOCK_CHARS)


def find_loop(text: str) -> Loop | None:
    """The shortest repeated block of whole lines ending the reply's complete lines that `fires`, or None."""
    complete = text[:text.rfind("\n") + 1]
    lines = complete.split("\n")[:-1]
    n = len(lines)
    for k in range(1, n // 2 + 1):
        if lines[-1] != lines[-1 - k] or lines[-k:] != lines[-2 * k:-k]:
            continue
        copies = 2
        while (copies + 1) * k <= n and lines[n - (copies + 1) * k:n - copies * k] == lines[-k:]:
            copies += 1
        block_chars = sum(len(line.strip()) for line in lines[-k:])
        if fires(k, copies, block_chars):
            cut_lines = (copies - 1) * k
            keep = len(complete) - sum(len(line) + 1 for line in lines[n - cut_lines:])
            return Loop(k, copies, keep, block_chars)
    return None


def parses(code: str) -> bool:
    """True when the code is valid Python."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def salvage(text: str, loop: Loop) -> str | None:
    """The reply up to the end of the loop's first copy with its code fence closed, when it holds Python and all
    of it parses; else None (the reply stays cut)."""
    kept = text[:loop.keep]
    if is_unclosed(kept):
        kept += "```" if kept.endswith("\n") else "\n```"
    blocks = [b for b in extract_code_blocks(kept) if b.runnable_as == "python"]
    return kept if blocks and all(parses(b.code) for b in blocks) else None


def stopped_reply(text: str, loop: Loop | None) -> tuple[str, dict[str, Any]]:
    """The reply to return after generation stopped (on `loop`, or not) and what Usage.extra says about the loop:
    {"loop": {period_lines, copies, cut_chars, content_chars, salvaged}}, or {} when no line loop stopped it."""
    if loop is None:
        return text, {}
    kept = salvage(text, loop)
    note = {"period_lines": loop.period, "copies": loop.copies, "cut_chars": len(text) - loop.keep,
            "content_chars": len(text), "salvaged": kept is not None}
    return (kept if kept is not None else text), {"loop": note}


def salvaged_loop(provider: Any) -> dict[str, Any] | None:
    """The loop note of the provider's last reply when that reply was salvaged (read without popping the usage)."""
    usage = getattr(provider, "last_usage", None)
    note = (getattr(usage, "extra", None) or {}).get("loop")
    return note if note and note.get("salvaged") else None


LOOP = re.compile(r"(.{1,60}?)\1{5,}$", re.DOTALL)
LOOP_MIN_CHARS = 240


def looping(text: str) -> bool:
    """True when the reply ends in one short piece repeated over and over (at least 240 characters of it): a small
    model stuck in a loop, which would otherwise run on to max_tokens."""
    tail = text[-600:]
    m = LOOP.search(tail)
    return m is not None and m.end() - m.start() >= LOOP_MIN_CHARS


def loop_check(text: str, line_ended: bool) -> Loop | bool | None:
    """The single-reply path's loop detectors for one sequence: a block of lines repeated (at a line's end), or
    one short piece repeated (`looping`)."""
    if line_ended and (loop := find_loop(text)) is not None:
        return loop
    return looping(text[-2000:]) or None
