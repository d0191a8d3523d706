"""Checks before a run creates anything: the daemon, the image, orphaned containers, the local and network warnings."""

from __future__ import annotations

from agents.sandbox.config import SandboxConfig

NETWORK_WARNING = ("sandbox.network: bridge gives LLM-written code Docker's network: it can reach the internet and "
                   "your local network (the default, none, cannot)")


def warnings_for(cfg: SandboxConfig) -> list[str]:
    """What every run of this sandbox says before it starts, and records in its transcript (`warnings`)."""
    if cfg.kind == "local":
        from agents.sandbox.local_executor import WARNING

        return [WARNING]
    return [NETWORK_WARNING] if cfg.kind == "docker" and cfg.network != "none" else []


def preflight(cfg: SandboxConfig) -> list[str]:
    """Raise DockerUnavailable / ImageMissing early; return lines to show the user (warnings first). `cfg.image`
    becomes the image that will run (agents/sandbox/image.py resolve_image)."""
    lines = [f"[yellow]warning:[/] {w}" for w in warnings_for(cfg)]
    if cfg.kind != "docker":
        return lines
    from agents.sandbox.cleanup import remove_orphans
    from agents.sandbox.image import docker_client, ensure_image, resolve_image

    client = docker_client()
    try:
        image = resolve_image(cfg.image, cfg.languages, client)
        ensure_image(image, client, cfg.languages)
        cfg.image = image  # the image that runs (one with more languages, when the set's own is not built): the
        # transcript records it, and replay --execute runs it again
        removed = remove_orphans(client)
    finally:
        client.close()
    if removed:
        lines.append(f"removed {len(removed)} orphaned sandbox container(s) left by a killed run: {', '.join(removed)}")
    return lines
