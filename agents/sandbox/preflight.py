"""Checks before a run creates anything: the daemon, the image, orphaned containers, the local and network warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.loop.defaults import COMMAND
from agents.sandbox.config import SandboxConfig

NETWORK_WARNING = ("sandbox.network: bridge gives LLM-written code Docker's network: it can reach the internet and "
                   "your local network (the default, none, cannot)")


def warnings_for(cfg: SandboxConfig) -> list[str]:
    """What every run of this sandbox says before it starts, and records in its transcript (`warnings`)."""
    if cfg.kind == "local":
        from agents.sandbox.local_executor import WARNING

        return [WARNING]
    return [NETWORK_WARNING] if cfg.kind == "docker" and cfg.network != "none" else []


def preflight(cfg: SandboxConfig, scenario: Path | None = None) -> list[str]:
    """Raise DockerUnavailable / ImageMissing early; return lines to show the user (warnings first). `cfg.image`
    becomes the image that will run (agents/sandbox/image.py resolve_image). An image without the scenario's preset
    or declared packages is ImageMissing with the command that builds it (`codeduet sandbox build SCENARIO.yaml`)."""
    lines = [f"[yellow]warning:[/] {w}" for w in warnings_for(cfg)]
    if cfg.kind != "docker":
        return lines
    from agents.sandbox.cleanup import remove_orphans
    from agents.sandbox.image import docker_client, ensure_image, resolve_image

    client = docker_client()
    try:
        image = resolve_image(cfg.image, cfg.languages, client, cfg.debian_packages, cfg.packages.python,
                              cfg.packages.rust)
        ensure_image(image, client, cfg.languages, build_command(cfg, scenario), cfg.packages.python,
                     cfg.packages.rust)
        cfg.image = image  # the image that runs (one with more languages, when the set's own is not built): the
        # transcript records it, and replay --execute runs it again
        removed = remove_orphans(client)
    finally:
        client.close()
    if removed:
        lines.append(f"removed {len(removed)} orphaned sandbox container(s) left by a killed run: {', '.join(removed)}")
    return lines


def build_command(cfg: SandboxConfig, scenario: Path | None = None) -> str | None:
    """The command that builds the image of a sandbox with a preset or declared packages: `codeduet sandbox build`
    with the scenario's file when there is one, else with the options that say the same (None without packages)."""
    if not (cfg.preset or cfg.debian_packages or cfg.packages.python or cfg.packages.rust):
        return None
    if scenario is not None and scenario.is_file():
        return f"{COMMAND} sandbox build {scenario}"
    return cfg.build_command


def image_packages(cfg: SandboxConfig) -> dict[str, Any]:
    """For a transcript's header: what the image that runs (after preflight) was built with, `{"packages": {debian:
    {name: version}, python: {name: "version sha256:..."}}}`, for a docker sandbox with a preset or declared
    packages; else nothing."""
    if cfg.kind != "docker" or build_command(cfg) is None:
        return {}
    from agents.sandbox.image import image_status
    from agents.sandbox.packages import pinned

    return {"packages": pinned(image_status(cfg.image).get("labels") or {})}
