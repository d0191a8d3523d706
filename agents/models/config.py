"""The model table (llm.yaml): named model entries, and turning a name or an inline entry into a provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.loop.errors import BadInputError
from agents.loop.protocols import ModelProvider
from agents.models import provider_class
from agents.models.config_list import PREFIX, parse_spec
from agents.record.paths import models_table
from agents.scenario.yamlio import Loc, line_of, load_yaml, validate


class ModelsFile(BaseModel):
    """The shape of the model table (llm.yaml)."""

    model_config = ConfigDict(extra="forbid")
    default: str
    """Name of the entry used when a scenario names none."""
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Named entries; each has a `provider` and that provider's own keys."""


def models_file_path() -> Path:
    """The model table in use (agents/record/paths.py: models_table)."""
    return models_table()


def load_models_file(path: Path | None = None) -> tuple[ModelsFile, dict[Loc, int], Path]:
    """Read and validate the models file."""
    path = path or models_file_path()
    data, lines = load_yaml(path)
    return validate(ModelsFile, data, str(path), lines), lines, path


def build_entry(name: str, entry: Any, origin: str, lines: dict[Loc, int], prefix: Loc) -> ModelProvider:
    """Validate one entry against its provider's Config and construct the provider."""
    if not isinstance(entry, dict) or "provider" not in entry:
        line = line_of(lines, prefix)
        raise BadInputError(f"{origin}:{line}: {'.'.join(map(str, prefix))}: a model entry needs a 'provider' key")
    try:
        cls = provider_class(str(entry["provider"]))
    except BadInputError as exc:  # an unknown name or a dotted path that does not import: where it is written
        where = (*prefix, "provider")
        raise BadInputError(f"{origin}:{line_of(lines, where)}: {'.'.join(map(str, where))}: {exc}") from None
    config = validate(cls.Config, entry, origin, lines, prefix=prefix)
    return cls(name, config)


def build_provider(spec: str | dict[str, Any] | None, *, origin: str = "<scenario>",
                   lines: dict[Loc, int] | None = None, prefix: Loc = ("model",)) -> ModelProvider:
    """A provider from a configs/llm.yaml name (None: the default), `oai:ENV_OR_FILE[?filter]` (an AG2 config list,
    agents/models/config_list.py) or an inline entry from a scenario."""
    if isinstance(spec, dict):
        return build_entry(str(spec.get("name", spec.get("provider", "inline"))),
                           {k: v for k, v in spec.items() if k != "name"}, origin, lines or {}, prefix)
    if spec is not None and spec.startswith(PREFIX):  # an AG2 config list: `oai:OAI_CONFIG_LIST?model=gpt-4o`
        return build_entry(spec, parse_spec(spec), "--model", {}, ("model",))
    models, file_lines, path = load_models_file()
    name = spec or models.default
    if name not in models.models:
        raise BadInputError(f"unknown model '{name}': {path} defines {', '.join(sorted(models.models))}")
    return build_entry(name, models.models[name], str(path), file_lines, ("models", name))
