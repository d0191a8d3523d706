"""AG2's OAI_CONFIG_LIST as a model: read as AG2 reads it, its first entry left by filter_dict served by the
OpenAI-compatible provider (agents/models/openai_compat.py); the key stays inside the provider.

The reading mirrors ag2 0.14's `autogen.llm_config.utils.config_list_from_json` (tests/test_config_list.py compares
the two): `env_or_file` names an environment variable holding the JSON or a file's path, else a file (under
`file_location`). codeduet also looks in ./.env and ~/.config/codeduet/.env, never over the environment.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field

from agents.loop.errors import BadInputError, ModelUnavailable
from agents.models.openai_compat import OpenAIConfig, OpenAIProvider
from agents.record.paths import dotenv_files

PREFIX = "oai:"
"""`--model oai:ENV_OR_FILE[?key=value,value&key=value]`: a config list named on the command line."""
HONOURED = {"model", "api_key", "base_url", "api_type", "temperature", "max_tokens"}
IGNORED = {"tags", "price", "stream", "top_p"}
"""Entry keys codeduet does not need: AG2's filtering and cost bookkeeping; it always streams; the strategy sets
top_p."""
OPENAI_TYPES = {None, "openai"}


class ConfigListConfig(BaseModel):
    """A model entry naming an AG2 config list (OAI_CONFIG_LIST)."""

    model_config = ConfigDict(extra="forbid")
    provider: str = "oai_config_list"
    """Always `oai_config_list`."""
    env_or_file: str = "OAI_CONFIG_LIST"
    """An environment variable holding the JSON (or a file's path), else the JSON file itself: AG2's argument."""
    file_location: str = ""
    """The folder `env_or_file` is looked up in when it is a file name (AG2's argument; default the current folder)."""
    filter_dict: dict[str, Any] | None = None
    """AG2's filter: {key: [accepted values]}; an entry matches when every key does. The first match is used."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature; default the entry's own, else 0."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Most tokens per reply; default the entry's own, else the server's."""
    timeout: int = Field(default=120, ge=1)
    """Seconds to wait for one reply."""


def parse_spec(text: str) -> dict[str, Any]:
    """`oai:OAI_CONFIG_LIST?model=gpt-4o,gpt-4o-mini&api_type=openai` -> an entry for ConfigListConfig."""
    source, _, query = text.removeprefix(PREFIX).partition("?")
    if not source:
        raise BadInputError(f"--model {text!r}: name the config list, like oai:OAI_CONFIG_LIST or oai:path/list.json")
    entry: dict[str, Any] = {"provider": "oai_config_list", "env_or_file": source}
    pairs = parse_qsl(query, keep_blank_values=True)
    if pairs:
        entry["filter_dict"] = {key: value.split(",") for key, value in pairs}
    return entry


def read_config_list(env_or_file: str, file_location: str = "") -> tuple[list[Any], str]:
    """The parsed JSON and where it came from, as AG2 finds it; every failure is one BadInputError line."""
    for path in dotenv_files():
        if path.is_file():
            from dotenv import load_dotenv

            load_dotenv(path, override=False)
    value = os.environ.get(env_or_file)
    if value:
        if os.path.exists(value):
            where, text = f"${env_or_file} ({value})", _read(Path(value), f"${env_or_file} names {value}")
        else:
            where, text = f"${env_or_file}", value
    else:
        path = Path(file_location) / env_or_file if file_location else Path(env_or_file)
        if not path.is_file():
            raise BadInputError(f"{env_or_file}: neither an environment variable nor a file ({path.absolute()}): "
                                "export it holding the JSON list or a file's path, or give the file's path")
        where, text = str(path), _read(path, str(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:  # the message names the position only, never the text (it holds keys)
        what = "neither an existing file nor JSON" if where == f"${env_or_file}" else "not valid JSON"
        raise BadInputError(f"{where}: {what} ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise BadInputError(f"{where}: an AG2 config list is a JSON list of entries like "
                            '{"model": "gpt-4o", "api_key": "..."}, not ' + type(data).__name__)
    return data, where


def _read(path: Path, what: str) -> str:
    """A file's text; unreadable is one line."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{what}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None


def satisfies(value: Any, accepted: Any) -> bool:
    """AG2's `_satisfies_criteria`: a missing key never matches; a list matches by intersection."""
    if value is None:
        return False
    if isinstance(value, list):
        return bool(set(value) & set(accepted)) if isinstance(accepted, list) else accepted in value
    return value in accepted if isinstance(accepted, list) else bool(value == accepted)


def filtered(entries: list[dict[str, Any]], filter_dict: dict[str, Any] | None) -> list[tuple[int, dict[str, Any]]]:
    """(position from 1, entry) of each entry AG2's `filter_config` keeps."""
    return [(n, e) for n, e in enumerate(entries, 1)
            if not filter_dict or all(satisfies(e.get(k), v) for k, v in filter_dict.items())]


@dataclass
class Chosen:
    """The entry in use: where it came from and what it says (the key never in its repr)."""

    where: str
    position: int
    count: int
    entry: dict[str, Any] = field(repr=False)

    @property
    def label(self) -> str:
        """`$OAI_CONFIG_LIST entry 2 (model gpt-4o)`: how every line names it."""
        return f"{self.where} entry {self.position} (model {self.entry.get('model', '?')})"


def choose(cfg: ConfigListConfig) -> Chosen:
    """The first entry the filter leaves, checked: openai (or no api_type), a model, only keys codeduet honours."""
    entries, where = read_config_list(cfg.env_or_file, cfg.file_location)
    kept = filtered(entries, cfg.filter_dict)
    if not kept:
        models = ", ".join(str(e.get("model", "?")) for e in entries) or "none"
        raise BadInputError(f"{where}: no entry of {len(entries)} matches filter_dict {cfg.filter_dict} "
                            f"(models there: {models})")
    chosen = Chosen(where, kept[0][0], len(kept), kept[0][1])
    entry = chosen.entry
    api_type = entry.get("api_type")
    if api_type not in OPENAI_TYPES:
        raise BadInputError(f"{chosen.label}: api_type {api_type} is not supported; codeduet talks to OpenAI and "
                            "OpenAI-compatible servers (api_type openai, or none, with base_url for a server of "
                            "your own): choose such an entry with filter_dict, e.g. ?api_type=openai")
    if not isinstance(entry.get("model"), str) or not entry["model"]:
        raise BadInputError(f"{chosen.label}: the entry has no 'model'")
    unknown = sorted(set(entry) - HONOURED - IGNORED)
    if unknown:
        raise BadInputError(f"{chosen.label}: codeduet does not use {', '.join(map(repr, unknown))} (it reads "
                            f"{', '.join(sorted(HONOURED))}): remove it or choose another entry with filter_dict")
    return chosen


class ConfigListProvider(OpenAIProvider):
    """Provider for `provider: oai_config_list` (and `--model oai:...`): the list is read on first use, so a
    table entry builds without it; its entry then acts as an `openai` entry whose key came from the list."""

    Config = ConfigListConfig

    def __init__(self, name: str, config: ConfigListConfig):
        self.chosen: Chosen | None = None
        self._openai: OpenAIConfig | None = None
        super().__init__(name, config)  # sets self.config, below: the source

    @property
    def config(self) -> OpenAIConfig:  # type: ignore[override]
        """The chosen entry as an `openai` entry (the list is read on first access)."""
        if self._openai is None:
            chosen, src = choose(self.source), self.source
            entry = chosen.entry
            self._openai = OpenAIConfig(
                model=entry["model"], base_url=entry.get("base_url"), api_key_env="OPENAI_API_KEY",
                api_key_optional=bool(entry.get("base_url")), timeout=src.timeout,
                temperature=src.temperature if src.temperature is not None else entry.get("temperature", 0.0),
                max_tokens=src.max_tokens or entry.get("max_tokens"))
            self.chosen = chosen
        return self._openai

    @config.setter
    def config(self, value: ConfigListConfig) -> None:
        self.source = value

    def _entry_key(self) -> str:
        """The chosen entry's api_key ('' when it has none); reads the list once."""
        self.config  # noqa: B018 (reads the list once)
        return str((self.chosen.entry if self.chosen else {}).get("api_key") or "").strip()

    def _api_key(self) -> str:
        """The entry's api_key; without one, OPENAI_API_KEY as openai's client would (none needed with base_url)."""
        key = self._entry_key()
        try:
            return key or super()._api_key()
        except ModelUnavailable:
            label = self.chosen.label if self.chosen else self.name
            raise ModelUnavailable(f"{label} has no api_key and OPENAI_API_KEY is not set: add the key to the entry "
                                   "or put OPENAI_API_KEY in .env (or give the entry a base_url)") from None

    def key_source(self) -> str:
        """The entry's api_key, or OPENAI_API_KEY when the entry has none."""
        if self._entry_key() and self.chosen:
            return f"the api_key of {self.chosen.label}"
        return super().key_source()

    def describe(self) -> dict[str, Any]:
        """Where the list is, the filter and, once read, the entry in use; never the key."""
        out = {"name": self.name, "provider": "oai_config_list", "env_or_file": self.source.env_or_file,
               "filter_dict": self.source.filter_dict, "streamed": True}
        if self.chosen is not None:
            out.update(entry=self.chosen.position, entries_matching=self.chosen.count, model=self.config.model,
                       base_url=self.config.base_url, temperature=self.config.temperature)
        return out
