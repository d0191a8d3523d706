"""Where codeduet keeps things: the project root, workspaces and the cache home."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def codeduet_home() -> Path:
    """Cache folder for models and build artefacts (`CODEDUET_HOME`, default ~/.cache/codeduet)."""
    env = os.environ.get("CODEDUET_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "codeduet"


def models_dir() -> Path:
    """Folder holding downloaded model files."""
    return codeduet_home() / "models"


def default_workspaces() -> Path:
    """Root under which each run gets its own folder: `CODEDUET_WORKSPACES`, else ./workspaces of the current
    folder."""
    env = os.environ.get("CODEDUET_WORKSPACES")
    return Path(env).expanduser() if env else Path.cwd() / "workspaces"


def user_config_dir() -> Path:
    """The user's codeduet config folder: $XDG_CONFIG_HOME/codeduet, default ~/.config/codeduet."""
    base = os.environ.get("XDG_CONFIG_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".config") / "codeduet"


DEFAULT_MODELS_TABLE = Path(__file__).resolve().parents[1] / "models" / "llm.yaml"
"""The model table shipped inside the package: used when the user has none."""

MODELS_TABLE_ORDER = "$CODEDUET_CONFIGS, ./configs/llm.yaml, ~/.config/codeduet/llm.yaml, then the default shipped " \
                     "with codeduet"
"""Where the model table is looked for, in words (--help, errors)."""


def models_table() -> Path:
    """The model table in use: `CODEDUET_CONFIGS` (a YAML file, or a folder holding llm.yaml), else
    ./configs/llm.yaml of the current folder, else llm.yaml in the user config folder, else the shipped default."""
    env = os.environ.get("CODEDUET_CONFIGS")
    if env:
        path = Path(env).expanduser()
        path = path / "llm.yaml" if path.is_dir() else path
        if not path.is_file():
            from agents.loop.errors import EnvironmentProblem

            raise EnvironmentProblem(f"CODEDUET_CONFIGS={env}: no such file (name a llm.yaml, or a folder holding "
                                     "one, or unset it to use ./configs/llm.yaml or the default)")
        return path
    for path in (Path.cwd() / "configs" / "llm.yaml", user_config_dir() / "llm.yaml"):
        if path.is_file():
            return path
    return DEFAULT_MODELS_TABLE


def dotenv_files() -> list[Path]:
    """The .env files read for secrets, first wins (never over the environment): ./.env, then the user config
    folder's."""
    return [Path.cwd() / ".env", user_config_dir() / ".env"]
