"""Executors by name: `docker` (hardened container, default) and `local` (opt-in, no isolation); a session other than
a process per block is an executor of its own (`kernel`: agents/sandbox/kernel_executor.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agents.loop.protocols import Executor
from agents.loop.registry import resolve

if TYPE_CHECKING:  # `codeduet --help` loads this package (sandbox/cli.py), and the config loads pydantic
    from agents.sandbox.config import SandboxConfig

EXECUTORS: dict[str, str] = {
    "docker": "agents.sandbox.docker_executor:DockerExecutor",
    "local": "agents.sandbox.local_executor:LocalExecutor",
}

SESSIONS: dict[str, str] = {
    "kernel": "agents.sandbox.kernel_executor:KernelExecutor",
}
"""`sandbox.session` other than `process`: the executor that keeps the session (the config allows it on docker)."""


def executor_class(cfg: SandboxConfig) -> type:
    """The executor class for the sandbox block: its session's, else its kind's."""
    if cfg.session in SESSIONS:
        return resolve(SESSIONS, cfg.session, "sandbox session")
    return resolve(EXECUTORS, cfg.kind, "sandbox kind")


def make_executor(cfg: SandboxConfig, workspace: Path, run_id: str | None = None) -> Executor:
    """Build the executor the scenario names."""
    return executor_class(cfg)(cfg, workspace, run_id)
