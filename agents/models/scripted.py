"""The scripted model: replies listed in YAML, given in order; TERMINATE when they run out.

It is a real model backend for offline, deterministic runs (tests, demos, CI), not a mock of anything else.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.loop.protocols import Usage
from agents.models.response import InProcessClientMixin, InProcessProviderMixin

if TYPE_CHECKING:
    from rich.console import Console


HEARTBEAT_S = 0.1
"""How often a scripted reply's wait (delay_s) beats."""


class ScriptedConfig(BaseModel):
    """A scripted model entry."""

    model_config = ConfigDict(extra="forbid")
    provider: str = "scripted"
    """Always `scripted`."""
    replies: list[str]
    """The assistant's replies, in order (at least one: with none, every attempt would end at once)."""
    model: str = "scripted"
    """Model id shown in transcripts."""
    delay_s: float = Field(default=0.0, ge=0, le=3600)
    """Seconds to wait before each reply (to behave like a slow model, e.g. to test Ctrl-C)."""
    line_delay_s: float = Field(default=0.0, ge=0, le=60)
    """Seconds between the streamed lines of a reply (to behave like a model that streams as it generates)."""
    when_exhausted: str = "TERMINATE"
    """What to answer once every reply has been used."""

    @field_validator("replies")
    @classmethod
    def _some(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("a scripted model needs at least one reply")
        return v


class ScriptedClient(InProcessClientMixin):
    """AG2 custom model client that plays back the provider's replies."""

    provider: "ScriptedProvider"

    def create(self, params: dict[str, Any]) -> Any:
        """Return the next reply."""
        self.provider.requests.append(list(params.get("messages") or []))
        text = self.provider.next_reply()
        return self.answered(text, self.provider.play(text, self.on_token))


class ScriptedProvider(InProcessProviderMixin):
    """Provider for `provider: scripted`."""

    Config = ScriptedConfig
    client_cls = ScriptedClient

    def __init__(self, name: str, config: ScriptedConfig):
        super().__init__(name, config)
        self.index = 0
        self.requests: list[list[dict[str, Any]]] = []
        """The messages of every request, in order: what the model was asked, for inspection."""

    def next_reply(self) -> str:
        """The next scripted reply, or `when_exhausted`."""
        if self.index < len(self.config.replies):
            self.index += 1
            return self.config.replies[self.index - 1]
        return self.config.when_exhausted

    def play(self, text: str, on_token: Any = None, stream: bool = True) -> Usage:
        """Wait and stream the reply as the entry says (delay_s, then line by line); its Usage. The wait beats like
        the embedded model's prompt evaluation: an empty piece to on_token every 0.1 s, so a time budget's guard
        stops it there; with stream=False (a candidate that does not stream) only the beats are sent."""
        started = time.perf_counter()
        end = time.monotonic() + self.config.delay_s
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(HEARTBEAT_S, left))
            if on_token:
                on_token("")
        if on_token and stream:
            for line in text.splitlines(keepends=True):
                on_token(line)
                if self.config.line_delay_s:
                    time.sleep(self.config.line_delay_s)
        return Usage(seconds=round(time.perf_counter() - started, 4))

    def complete_many(self, messages: list[dict[str, Any]], samplings: list[dict[str, Any]],
                      on_token: Any = None) -> list[tuple[str, Usage]]:
        """The next len(samplings) replies, in order; the first streams, the others only beat while they wait."""
        sink = on_token if on_token is not None else self.on_token
        out = []
        for i, _ in enumerate(samplings):
            self.requests.append(list(messages))
            text = self.next_reply()
            out.append((text, self.play(text, sink, stream=i == 0)))
        return out

    def check_ready(self, console: Console | None = None) -> None:
        """Always ready."""

    def describe(self) -> dict[str, Any]:
        """Name, provider, model id."""
        return {"name": self.name, "provider": "scripted", "model": self.config.model}
