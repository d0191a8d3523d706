"""`codeduet sandbox`: build, inspect and clean the sandbox image and containers."""

from __future__ import annotations

from typing import Optional

import typer

from agents.cli_common import cli_errors, console, language_list
from agents.defaults import SANDBOX_IMAGE

sandbox_app = typer.Typer(no_args_is_help=True, help="Build, inspect and clean the sandbox image and containers.")


@sandbox_app.command("build")
def sandbox_build(image: Optional[str] = typer.Option(None, help=f"The tag (default {SANDBOX_IMAGE}, or "
                                                    "codeduet-sandbox:c-go for --languages c,go)."),
                  languages: Optional[str] = typer.Option(None, metavar="LANG,...", help="Toolchains to add: c, "
                                                          "cpp, go, rust, javascript (Debian trixie's)."),
                  method: str = typer.Option("auto", help="auto | mmdebstrap | dockerfile")) -> None:
    """Build the sandbox image locally (no registry needed)."""
    from agents.sandbox.config import language_image
    from agents.sandbox.image import build_image

    with cli_errors():
        langs = tuple(language_list(languages) or ())
        image_id = build_image(image, method=method, console=console, languages=langs)
        console.print(f"built {image or language_image(langs)} ({image_id[:19]})")


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
