"""`codeduet sandbox`: build, inspect and clean the sandbox image and containers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import typer

from agents.cli.common import cli_errors, console, language_list
from agents.loop.defaults import SANDBOX_IMAGE

sandbox_app = typer.Typer(no_args_is_help=True, help="Build, inspect and clean the sandbox image and containers.")


@sandbox_app.command("build")
def sandbox_build(scenarios: Optional[list[Path]] = typer.Argument(None, metavar="[SCENARIO.yaml]...",
                                                                   help="Build the images these scenarios need "
                                                                   "(their languages, preset and packages)."),
                  image: Optional[str] = typer.Option(None, help=f"The tag (default {SANDBOX_IMAGE}, or "
                                                    "codeduet-sandbox:c-go for --languages c,go)."),
                  languages: Optional[str] = typer.Option(None, metavar="LANG,...", help="Toolchains to add: c, "
                                                          "cpp, go, rust, javascript (Debian trixie's)."),
                  preset: Optional[str] = typer.Option(None, help="backend | frontend | web: their languages and "
                                                       "Debian packages (docs/SANDBOX.md)."),
                  debian: Optional[str] = typer.Option(None, metavar="PKG,...", help="Debian packages to add."),
                  python: Optional[str] = typer.Option(None, metavar="REQ,...", help="PyPI packages to add (name or "
                                                       "name==version): wheels fetched now, installed offline."),
                  rust: Optional[str] = typer.Option(None, metavar="CRATE,...", help="Crates to vendor (name or "
                                                     "name==version; needs cargo here): Cargo projects build "
                                                     "with them offline."),
                  method: str = typer.Option("auto", help="auto | mmdebstrap | dockerfile")) -> None:
    """Build the sandbox image locally (no registry needed); with scenarios, the images they need."""
    from agents.sandbox.config import SandboxConfig
    from agents.sandbox.image import build_image
    from agents.scenario.yamlio import validate

    with cli_errors():
        if scenarios:
            build_for_scenarios(scenarios, method)
            return
        cfg = validate(SandboxConfig, {"languages": list(language_list(languages) or ()), "preset": preset,
                                       "packages": {"debian": _split(debian), "python": _split(python),
                                                    "rust": _split(rust)}},
                       "sandbox build", {})
        tag = image or cfg.image
        image_id = build_image(tag, method=method, console=console, languages=cfg.languages,
                               debian=cfg.debian_packages, python=cfg.packages.python, rust=cfg.packages.rust)
        console.print(f"built {tag} ({image_id[:19]})")


def build_for_scenarios(paths: list[Path], method: str) -> None:
    """Build the image each scenario's sandbox needs, once per image; one that a built image already serves (the
    image itself, or one with more languages and packages) is named, not built again."""
    from agents.sandbox.image import build_image, docker_client, image_status, resolve_image
    from agents.scenario.spec import load_scenario

    configs = {}
    for path in paths:
        cfg = load_scenario(path).sandbox
        if cfg.kind == "docker":
            configs.setdefault(cfg.image, cfg)
    client = docker_client()
    for tag, cfg in configs.items():
        have = resolve_image(tag, cfg.languages, client, cfg.debian_packages, cfg.packages.python,
                             cfg.packages.rust)
        if image_status(have, client)["exists"]:  # a tag is named by its packages: the one found has them
            console.print(f"{tag}: built" + (f" ({have} has everything it needs)" if have != tag else ""))
            continue
        image_id = build_image(tag, method=method, console=console, languages=cfg.languages,
                               debian=cfg.debian_packages, python=cfg.packages.python, rust=cfg.packages.rust)
        console.print(f"built {tag} ({image_id[:19]})")


def _split(text: str | None) -> list[str]:
    """A comma- or space-separated option as a list (not split inside brackets: serde[derive,std])."""
    return re.findall(r"(?:\[[^\]]*\]|[^,\s\[])+", text or "")


@sandbox_app.command("status")
def sandbox_status(image: Optional[str] = typer.Option(None, help=f"The image (default {SANDBOX_IMAGE})."),
                   languages: Optional[str] = typer.Option(None, metavar="LANG,...",
                                                           help="The image a scenario with these languages runs.")
                   ) -> None:
    """Whether the image exists, the limits a run applies, and every built image with its languages."""
    from agents.sandbox.status import print_status

    with cli_errors():
        raise typer.Exit(print_status(image, console, tuple(language_list(languages) or ())))


@sandbox_app.command("clean")
def sandbox_clean(all_: bool = typer.Option(False, "--all", help="Also containers of live runs."),
                  image: bool = typer.Option(False, "--image", help="Also remove the sandbox image.")) -> None:
    """Remove orphaned codeduet containers (and optionally the image)."""
    from agents.sandbox.status import clean

    with cli_errors():
        clean(console, everything=all_, remove_image=image)
