"""Bounded output capture: keep the head and the tail, count what was cut."""

from __future__ import annotations

from collections import deque


class BoundedOutput:
    """Collects text up to `limit` characters: 70% head, 30% tail, with a clear marker for the cut."""

    def __init__(self, limit: int):
        self.limit = limit
        self.head_limit = int(limit * 0.7)
        self.tail_limit = limit - self.head_limit
        self.head: list[str] = []
        self.head_len = 0
        self.tail: deque[str] = deque()
        self.tail_len = 0
        self.total = 0

    def write(self, text: str) -> None:
        """Add a chunk."""
        self.total += len(text)
        if self.head_len < self.head_limit:
            take = text[: self.head_limit - self.head_len]
            self.head.append(take)
            self.head_len += len(take)
            text = text[len(take):]
        if text:
            self.tail.append(text)
            self.tail_len += len(text)
            while self.tail and self.tail_len - len(self.tail[0]) >= self.tail_limit:
                self.tail_len -= len(self.tail.popleft())

    @property
    def truncated(self) -> bool:
        """Whether anything was cut."""
        return self.total > self.limit

    def text(self) -> str:
        """The kept output, with a marker where the middle was cut."""
        head = "".join(self.head)
        tail = "".join(self.tail)
        if not self.truncated:
            return head + tail
        tail = tail[-self.tail_limit:] if self.tail_limit else ""
        cut = self.total - len(head) - len(tail)
        return f"{head}\n[... output truncated: {cut:,} characters cut (output_limit={self.limit:,}) ...]\n{tail}"
