"""Silence AG2's own console printing: codeduet renders the conversation itself."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Any, Iterator

from autogen.io.base import IOStream


class QuietIO:
    """An AG2 IOStream that prints nothing; input goes through the agent's get_human_input instead."""

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        """Drop AG2's prints."""

    def send(self, message: Any) -> None:
        """Drop AG2's events."""

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        """Not used: SandboxProxy.get_human_input asks the person."""
        return input(prompt)


@contextmanager
def quiet_ag2() -> Iterator[None]:
    """Run a block with AG2's output stream silenced."""
    logger = logging.getLogger("autogen.oai.client")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        with IOStream.set_default(QuietIO()):
            yield
    finally:
        logger.setLevel(level)
