"""Finding fenced code blocks in an LLM reply."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)```", re.DOTALL)
OPEN_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n")

PYTHON = {"python", "py", "python3", ""}
SHELL = {"sh", "bash", "shell", "console"}
ALIASES = {**{k: "python" for k in PYTHON}, **{k: "sh" for k in SHELL}}


@dataclass
class CodeBlock:
    """One fenced block: its language tag as written and its code."""

    language: str
    code: str

    @property
    def runnable_as(self) -> str | None:
        """'python', 'sh', or None when we do not run this language."""
        return ALIASES.get(self.language.lower())

    def to_dict(self) -> dict[str, str]:
        """Plain dict for transcripts."""
        return asdict(self)


def extract_code_blocks(text: str | None) -> list[CodeBlock]:
    """All closed ``` blocks, in order; a final unclosed block (a cut-off reply) is included too."""
    if not text:
        return []
    blocks = [CodeBlock(m.group(1).strip().lower(), m.group(2)) for m in FENCE.finditer(text)]
    rest = FENCE.sub("", text)
    tail = OPEN_FENCE.search(rest)
    if tail and rest.count("```") % 2 == 1:
        code = rest[tail.end():]
        if code.strip():
            blocks.append(CodeBlock(tail.group(1).strip().lower(), code))
    return [b for b in blocks if b.code.strip()]


def is_unclosed(text: str | None) -> bool:
    """True when the reply ends inside an open code fence (usually a reply cut at max_tokens)."""
    return bool(text) and text.count("```") % 2 == 1


def classify_reply(text: Any) -> str:
    """What a reply holds, as both the strategy (before the proxy sees it) and the proxy (answering it) judge it:
    empty (also content that is not text) | unclosed (cut off inside a code block) | no_code | unsupported (blocks,
    none of them Python) | python."""
    if not isinstance(text, str) or not text.strip():
        return "empty"
    if is_unclosed(text):
        return "unclosed"
    blocks = extract_code_blocks(text)
    if not blocks:
        return "no_code"
    return "python" if any(b.runnable_as == "python" for b in blocks) else "unsupported"
