"""Where codeduet keeps things: the project root, workspaces and the cache home."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def codeduet_home() -> Path:
    """Cache folder for models and build artefacts (`CODEDUET_HOME`, default ~/.cache/codeduet)."""
    env = os.environ.get("CODEDUET_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "codeduet"


def models_dir() -> Path:
    """Folder holding downloaded model files."""
    return codeduet_home() / "models"


def default_workspaces() -> Path:
    """Root under which each run gets its own folder (`CODEDUET_WORKSPACES` overrides)."""
    env = os.environ.get("CODEDUET_WORKSPACES")
    return Path(env).expanduser() if env else PROJECT_ROOT / "workspaces"


def configs_dir() -> Path:
    """The project's configs/ folder (`CODEDUET_CONFIGS` overrides)."""
    env = os.environ.get("CODEDUET_CONFIGS")
    return Path(env).expanduser() if env else PROJECT_ROOT / "configs"
