"""Model providers by name: the local llama.cpp model, any OpenAI-compatible server (also named by an AG2
OAI_CONFIG_LIST), and the scripted model."""

from __future__ import annotations

from typing import Any

from agents.loop.registry import resolve

PROVIDERS: dict[str, str] = {
    "llama_cpp": "agents.models.llama_cpp:LlamaCppProvider",
    "openai": "agents.models.openai_compat:OpenAIProvider",
    "oai_config_list": "agents.models.config_list:ConfigListProvider",
    "scripted": "agents.models.scripted:ScriptedProvider",
}


def provider_class(name: str) -> Any:
    """The provider class for a registry name or dotted path."""
    return resolve(PROVIDERS, name, "model provider")
