"""Any OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio) through AG2's own OpenAI client."""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.errors import ModelUnavailable
from agents.paths import PROJECT_ROOT
from agents.protocols import TokenSink, Usage

NO_KEY = "not-needed"


class OpenAIConfig(BaseModel):
    """An OpenAI-compatible model entry."""

    model_config = ConfigDict(extra="forbid")
    provider: str = "openai"
    """Always `openai`."""
    model: str
    """Model name as the server knows it, e.g. gpt-4o-mini or qwen2.5-coder:1.5b."""
    base_url: str | None = None
    """Server URL ending in /v1; default: OpenAI's."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable (or .env key) holding the API key; never the key itself."""
    api_key_optional: bool = False
    """True for local servers that need no key (Ollama, vLLM, LM Studio)."""
    temperature: float = Field(default=0.0, ge=0, le=2)
    """Sampling temperature."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Most tokens per reply; default: the server's."""
    timeout: int = Field(default=120, ge=1)
    """Seconds to wait for one reply."""


class OpenAIProvider:
    """Provider for `provider: openai`."""

    Config = OpenAIConfig

    def __init__(self, name: str, config: OpenAIConfig):
        self.name = name
        self.config = config
        self.agent: Any = None
        self._seen: tuple[int, int] = (0, 0)

    def _api_key(self) -> str:
        """The key from the environment (after loading the project's .env), or the placeholder if optional."""
        from dotenv import load_dotenv

        load_dotenv(PROJECT_ROOT / ".env", override=False)
        key = os.environ.get(self.config.api_key_env, "").strip()
        if key:
            return key
        if self.config.api_key_optional:
            return NO_KEY
        raise ModelUnavailable(f"model '{self.name}' needs {self.config.api_key_env}: put it in .env "
                               "(see configs/.env.example) or export it")

    def check_ready(self) -> None:
        """The API key is available (no network call)."""
        self._api_key()

    def llm_config(self) -> dict[str, Any]:
        """AG2's native OpenAI config; it holds the key, so never write it anywhere (see secrets())."""
        entry: dict[str, Any] = {"api_type": "openai", "model": self.config.model, "api_key": self._api_key()}
        if self.config.base_url:
            entry["base_url"] = self.config.base_url
        # no temperature here: AG2 lets config entries override create() arguments, and each call passes its own
        cfg: dict[str, Any] = {"config_list": [entry], "cache_seed": None, "timeout": self.config.timeout}
        if self.config.max_tokens:
            cfg["max_tokens"] = self.config.max_tokens
        return cfg

    def secrets(self) -> list[str]:
        """Key values the transcript writer must scrub."""
        try:
            key = self._api_key()
        except ModelUnavailable:
            return []
        return [] if key == NO_KEY else [key]

    def attach(self, agent: Any, on_token: TokenSink | None = None) -> None:
        """Nothing to register (AG2's client is native); remember the agent to read its usage."""
        self.agent = agent
        self._seen = self._totals()

    def _totals(self) -> tuple[int, int]:
        """Prompt and completion tokens summed over the agent client's usage summary."""
        summary = getattr(getattr(self.agent, "client", None), "total_usage_summary", None) or {}
        prompt = sum(v.get("prompt_tokens", 0) for v in summary.values() if isinstance(v, dict))
        completion = sum(v.get("completion_tokens", 0) for v in summary.values() if isinstance(v, dict))
        return prompt, completion

    def pop_usage(self) -> Usage | None:
        """Tokens used since the last call, from AG2's usage summary; None if unknown."""
        if self.agent is None:
            return None
        now = self._totals()
        if now == self._seen:
            return None
        usage = Usage(prompt_tokens=now[0] - self._seen[0], completion_tokens=now[1] - self._seen[1])
        self._seen = now
        return usage

    def sampling_params(self, temperature: float | None, seed: int, top_p: float) -> dict[str, Any]:
        """Per-call sampling (the entry's temperature when None); seed and top_p only when sampling."""
        if temperature is None:
            return {"temperature": self.config.temperature}
        return {"temperature": temperature, "seed": seed, "top_p": top_p}

    def describe(self) -> dict[str, Any]:
        """Name, provider, model, server and settings; never the key."""
        return {"name": self.name, "provider": "openai", "model": self.config.model,
                "base_url": self.config.base_url, "api_key_env": self.config.api_key_env,
                "temperature": self.config.temperature}
