"""Executors by name: `docker` (hardened container, default) and `local` (opt-in, no isolation)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agents.protocols import Executor
from agents.registry import resolve

if TYPE_CHECKING:  # `codeduet --help` loads this package (sandbox/cli.py), and the config loads pydantic
    from agents.sandbox.config import SandboxConfig

EXECUTORS: dict[str, str] = {
    "docker": "agents.sandbox.docker_executor:DockerExecutor",
    "local": "agents.sandbox.local_executor:LocalExecutor",
}


def make_executor(cfg: SandboxConfig, workspace: Path, run_id: str) -> Executor:
    """Build the executor the scenario names."""
    cls = resolve(EXECUTORS, cfg.kind, "sandbox kind")
    return cls(cfg, workspace, run_id)
