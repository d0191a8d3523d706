"""The request and response shapes AG2's ModelClient protocol deals in, shared by our own model clients."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

from agents.loop.protocols import TokenSink, Usage


def clean_messages(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """OpenAI-style messages reduced to role + text (None content is ""; other roles speak as the user)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        role = m.get("role", "user")
        out.append({"role": role if role in ("system", "user", "assistant") else "user", "content": content or ""})
    return out


class StreamedReply:
    """A reply as it streams: each piece goes to on_token, and the time to the first piece (TTFT) is kept."""

    def __init__(self, on_token: TokenSink | None = None):
        self.on_token = on_token
        self.started = time.perf_counter()
        self.first_token_s: float | None = None
        self.parts: list[str] = []

    def add(self, text: str | None) -> bool:
        """Take one streamed piece; False (and nothing shown) when it holds no text."""
        if not text:
            return False
        if self.first_token_s is None:
            self.first_token_s = round(time.perf_counter() - self.started, 4)
        self.parts.append(text)
        if self.on_token:
            self.on_token(text)
        return True

    @property
    def text(self) -> str:
        """Everything received so far."""
        return "".join(self.parts)

    def usage(self, **known: Any) -> Usage:
        """The reply's Usage: what the caller knows, plus its duration so far and its TTFT."""
        return Usage(seconds=round(time.perf_counter() - self.started, 4), first_token_s=self.first_token_s, **known)


def make_response(text: str, model: str, usage: Usage) -> SimpleNamespace:
    """An OpenAI-like chat completion holding one assistant message."""
    message = SimpleNamespace(content=text, role="assistant", function_call=None, tool_calls=None)
    return SimpleNamespace(
        choices=[SimpleNamespace(message=message, finish_reason="stop", index=0)],
        model=model,
        usage=SimpleNamespace(
            prompt_tokens=usage.prompt_tokens or 0,
            completion_tokens=usage.completion_tokens or 0,
            total_tokens=(usage.prompt_tokens or 0) + (usage.completion_tokens or 0),
        ),
        cost=0.0,
        codeduet_usage=usage,
    )


class InProcessClientMixin:
    """The AG2 ModelClient plumbing shared by our clients (local, scripted, OpenAI-compatible): the constructor
    register_model_client calls, the response wrapping and usage, message_retrieval, cost and get_usage."""

    def __init__(self, config: dict[str, Any], provider: Any, on_token: TokenSink | None = None):
        self.provider = provider
        self.on_token = on_token

    def answered(self, text: str, usage: Usage) -> SimpleNamespace:
        """Keep the usage for the provider's pop_usage and wrap the text as AG2 expects."""
        self.provider.last_usage = usage
        return make_response(text, self.provider.config.model, usage)

    def message_retrieval(self, response: Any) -> list[str]:
        """The text of each choice."""
        return [c.message.content for c in response.choices]

    def cost(self, response: Any) -> float:
        """Not counted (local models cost nothing; a server's price is not known here)."""
        return 0.0

    @staticmethod
    def get_usage(response: Any) -> dict[str, Any]:
        """Usage in AG2's RESPONSE_USAGE_KEYS."""
        u = response.usage
        return {
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "total_tokens": u.total_tokens,
            "cost": 0.0,
            "model": response.model,
        }


class InProcessProviderMixin:
    """llm_config / attach / pop_usage / secrets, identical for every provider whose client runs in this process.

    The provider sets `client_cls` (its AG2 model client class) and `Config` (its pydantic entry, with `model`)."""

    client_cls: type
    config: Any

    on_token: TokenSink | None = None
    """The streaming sink given to attach (where the first of several candidates streams)."""

    def __init__(self, name: str, config: Any):
        self.name = name
        self.config = config
        self.last_usage: Usage | None = None

    def llm_config(self) -> dict[str, Any]:
        """One config entry naming our client class; no AG2 cache so replays stay honest."""
        return {"config_list": [{"model": self.config.model, "model_client_cls": self.client_cls.__name__}],
                "cache_seed": None}

    def attach(self, agent: Any, on_token: TokenSink | None = None) -> None:
        """Register the client class on the assistant."""
        self.on_token = on_token
        agent.register_model_client(self.client_cls, provider=self, on_token=on_token)

    def default_candidates(self) -> int:
        """One reply per turn unless the backend decodes several together (the llama.cpp provider says 4)."""
        return 1

    def secrets(self) -> list[str]:
        """An in-process model holds no key."""
        return []

    def pop_usage(self) -> Usage | None:
        """Usage of the last reply."""
        usage, self.last_usage = self.last_usage, None
        return usage

    def sampling_params(self, temperature: float | None, seed: int, top_p: float) -> dict[str, Any]:
        """temperature / seed / top_p for the client's create(); {} for a backend with no sampling."""
        if "temperature" not in type(self.config).model_fields:
            return {}
        if temperature is None:
            return {"temperature": self.config.temperature, "seed": self.config.seed, "top_p": self.config.top_p}
        return {"temperature": temperature, "seed": seed, "top_p": top_p}
