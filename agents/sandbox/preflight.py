"""Checks before a run creates anything: the daemon, the image, orphaned containers, the local warning."""

from __future__ import annotations

from agents.scenario import SandboxConfig


def preflight(cfg: SandboxConfig) -> list[str]:
    """Raise DockerUnavailable / ImageMissing early; return lines to show the user."""
    if cfg.kind == "local":
        from agents.sandbox.local_executor import WARNING

        return [f"[yellow]warning:[/] {WARNING}"]
    if cfg.kind != "docker":
        return []
    from agents.sandbox.cleanup import remove_orphans
    from agents.sandbox.image import docker_client, ensure_image

    client = docker_client()
    ensure_image(cfg.image)
    removed = remove_orphans(client)
    if removed:
        return [f"removed {len(removed)} orphaned sandbox container(s) left by a killed run: {', '.join(removed)}"]
    return []
