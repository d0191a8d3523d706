"""`sandbox status` and `sandbox clean`."""

from __future__ import annotations

from rich.console import Console

from agents.loop.errors import EXIT_ENVIRONMENT, EXIT_OK
from agents.sandbox.config import SandboxConfig, language_image
from agents.sandbox.image import (
    BUILD_HINT,
    LABEL,
    LANGUAGES_LABEL,
    ROOTFS_LABEL,
    docker_client,
    image_status,
    resolve_image,
    stale,
)
from agents.sandbox.image import remove_image as rmi
from agents.sandbox.packages import DEBIAN_LABEL, pinned


def print_status(image: str | None, console: Console, languages: tuple[str, ...] = ()) -> int:
    """Daemon, the image (of `languages`, when no image is named), every codeduet image built with its languages,
    and the default limits; exit 3 when the image is missing."""
    from agents.sandbox.cleanup import codeduet_containers, is_orphan
    from agents.sandbox.docker_executor import LABEL as RUN_LABEL
    from agents.sandbox.docker_executor import LABEL_PID, hardening

    client = docker_client()
    image = image or resolve_image(language_image(languages), languages, client)
    info = image_status(image)
    console.print(f"docker: reachable (server {client.version().get('Version', '?')})")
    old = stale(info, languages)
    if info.get("exists"):
        console.print(f"image: {image} present, id {str(info.get('id'))[:19]}, "
                      f"size {int(info.get('size') or 0) / 1e6:.0f} MB"
                      + (f" [yellow]built from an older recipe[/]: {BUILD_HINT} to make it again" if old else ""))
    else:
        hint = BUILD_HINT.replace("build`", f"build --languages {','.join(languages)}`") if languages else BUILD_HINT
        console.print(f"image: {image} [red]missing[/]: {hint}")
    for line in built_images(client):
        console.print(line, highlight=False)
    cfg = SandboxConfig(image=image, languages=list(languages))
    console.print("limits (scenario defaults): " + ", ".join(
        f"{k}={v}" for k, v in hardening(cfg).items() if k not in ("environment", "mounts"))
        + f", workspace=tmpfs volume of {cfg.disk} (no host bind mount), timeout={cfg.timeout:g}s"
        f", output_limit={cfg.output_limit}")
    containers = codeduet_containers(client)
    orphans = [c for c in containers if is_orphan(c)]
    console.print(f"containers: {len(containers)} codeduet container(s) present, {len(orphans)} orphaned"
                  + (" (`codeduet sandbox clean` removes them)" if orphans else ""))
    for c in containers:
        labels = c.labels or {}
        owner = f"pid {labels.get(LABEL_PID, '?')}"
        state = f"orphan: its process ({owner}) is gone" if c in orphans else f"in use by {owner}"
        console.print(f"  {c.name}  run {labels.get(RUN_LABEL, '?')}  {state}", soft_wrap=True, highlight=False)
    return EXIT_OK if info.get("exists") and not old else EXIT_ENVIRONMENT


def built_images(client: object) -> list[str]:
    """One line per codeduet sandbox image built here: tag, languages, declared packages, size."""
    lines = []
    for img in client.images.list(filters={"label": f"{LABEL}=1"}):  # type: ignore[attr-defined]
        labels = img.labels or {}
        if not img.tags or ROOTFS_LABEL in labels and LABEL not in labels:
            continue
        langs = labels.get(LANGUAGES_LABEL) or ""
        size = (img.attrs.get("Size") or 0) / 1e6
        debian = [n for n in labels.get(DEBIAN_LABEL, "").split(",") if n]
        pypi = [f"{name} {pin.split()[0]}" for name, pin in pinned(labels).get("python", {}).items()]
        lines.append(f"  {img.tags[0]}: python {labels.get('org.codeduet.sandbox.python', '?')}"
                     + (f" + {langs.replace(',', ', ')}" if langs else "")
                     + (f", {len(debian)} declared Debian packages" if debian else "")
                     + (f", PyPI {', '.join(pypi)}" if pypi else "") + f", {size:.0f} MB")
    return ["built images:", *sorted(lines)] if lines else []


def clean(console: Console, everything: bool = False, remove_image: bool = False) -> None:
    """Remove orphaned (or all) codeduet containers, and the image if asked."""
    from agents.sandbox.cleanup import remove_orphans

    removed = remove_orphans(docker_client(), everything=everything)
    console.print(f"removed {len(removed)} container(s)" + (f": {', '.join(removed)}" if removed else ""))
    if remove_image:
        rmi(SandboxConfig().image)
        console.print("removed the sandbox image")
