"""The scripted model: replies listed in YAML, given in order; TERMINATE when they run out.

It is a real model backend for offline, deterministic runs (tests, demos, CI), not a mock of anything else.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.models.response import InProcessClientMixin, make_response
from agents.protocols import TokenSink, Usage


class ScriptedConfig(BaseModel):
    """A scripted model entry."""

    model_config = ConfigDict(extra="forbid")
    provider: str = "scripted"
    """Always `scripted`."""
    replies: list[str] = Field(default_factory=list)
    """The assistant's replies, in order."""
    model: str = "scripted"
    """Model id shown in transcripts."""
    delay_s: float = Field(default=0.0, ge=0, le=3600)
    """Seconds to wait before each reply (to behave like a slow model, e.g. to test Ctrl-C)."""
    when_exhausted: str = "TERMINATE"
    """What to answer once every reply has been used."""


class ScriptedClient(InProcessClientMixin):
    """AG2 custom model client that plays back the provider's replies."""

    def __init__(self, config: dict[str, Any], provider: "ScriptedProvider", on_token: TokenSink | None = None):
        self.provider = provider
        self.on_token = on_token

    def create(self, params: dict[str, Any]) -> Any:
        """Return the next reply."""
        started = time.perf_counter()
        text = self.provider.next_reply()
        if self.provider.config.delay_s:
            time.sleep(self.provider.config.delay_s)
        if self.on_token:
            for line in text.splitlines(keepends=True):
                self.on_token(line)
        usage = Usage(prompt_tokens=None, completion_tokens=None, seconds=round(time.perf_counter() - started, 4))
        self.provider.last_usage = usage
        return make_response(text, self.provider.config.model, usage)


class ScriptedProvider:
    """Provider for `provider: scripted`."""

    Config = ScriptedConfig

    def __init__(self, name: str, config: ScriptedConfig):
        self.name = name
        self.config = config
        self.index = 0
        self.last_usage: Usage | None = None

    def next_reply(self) -> str:
        """The next scripted reply, or `when_exhausted`."""
        if self.index < len(self.config.replies):
            self.index += 1
            return self.config.replies[self.index - 1]
        return self.config.when_exhausted

    def check_ready(self) -> None:
        """Always ready."""

    def llm_config(self) -> dict[str, Any]:
        """One config entry naming our client class; no cache so replays stay honest."""
        return {"config_list": [{"model": self.config.model, "model_client_cls": "ScriptedClient"}],
                "cache_seed": None}

    def attach(self, agent: Any, on_token: TokenSink | None = None) -> None:
        """Register ScriptedClient on the assistant."""
        agent.register_model_client(ScriptedClient, provider=self, on_token=on_token)

    def pop_usage(self) -> Usage | None:
        """Usage of the last reply."""
        usage, self.last_usage = self.last_usage, None
        return usage

    def describe(self) -> dict[str, Any]:
        """Name, provider, model id."""
        return {"name": self.name, "provider": "scripted", "model": self.config.model}
