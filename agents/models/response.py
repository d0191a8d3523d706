"""The response shape AG2's ModelClient protocol expects, shared by our in-process clients."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from agents.protocols import Usage


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
