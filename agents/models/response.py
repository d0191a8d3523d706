"""The response shape AG2's ModelClient protocol expects, shared by our in-process clients."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from agents.protocols import TokenSink, Usage


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
    """message_retrieval / cost / get_usage, identical for every in-process client."""

    def message_retrieval(self, response: Any) -> list[str]:
        """The text of each choice."""
        return [c.message.content for c in response.choices]

    def cost(self, response: Any) -> float:
        """In-process models cost nothing."""
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
    """llm_config / attach / pop_usage, identical for every provider whose client runs in this process.

    The provider sets `client_cls` (its AG2 model client class), `config.model` and `last_usage`."""

    client_cls: type
    config: Any
    last_usage: Usage | None

    def llm_config(self) -> dict[str, Any]:
        """One config entry naming our client class; no AG2 cache so replays stay honest."""
        return {"config_list": [{"model": self.config.model, "model_client_cls": self.client_cls.__name__}],
                "cache_seed": None}

    def attach(self, agent: Any, on_token: TokenSink | None = None) -> None:
        """Register the client class on the assistant."""
        agent.register_model_client(self.client_cls, provider=self, on_token=on_token)

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
