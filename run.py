"""codeduet command line: a thin typer app over the `agents` package."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from agents import cli

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Two AG2 agents write, run and fix code in a Docker sandbox.")
sandbox_app = typer.Typer(no_args_is_help=True, help="Build, inspect and clean the sandbox image and containers.")
model_app = typer.Typer(no_args_is_help=True, help="Get and inspect the embedded local model.")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(model_app, name="model")


@app.command()
def run(scenarios: List[Path] = typer.Argument(..., help="One or more scenario YAML files."),
        model: Optional[str] = typer.Option(None, help="Model name from configs/llm.yaml."),
        max_auto_reply: Optional[int] = typer.Option(None, min=0, help="Override max_consecutive_auto_reply."),
        human: Optional[str] = typer.Option(None, help="Override human_input_mode: always|terminate|never."),
        workspace: Optional[Path] = typer.Option(None, help="Root folder for run folders (default workspaces/)."),
        jobs: int = typer.Option(1, min=1, help="Batch: scenarios run at once (each in its own process)."),
        json_out: bool = typer.Option(False, "--json", help="Print a JSON summary instead of the conversation.")) -> None:
    """Run scenario(s); exit 0 success, 1 failed/max_replies, 2 bad input, 3 environment."""
    from agents.conversation import RunOptions
    from agents.hitl import human_for_mode, normalize_mode

    cli.install_signal_handlers()
    with cli.cli_errors():
        mode = normalize_mode(human)
        if len(scenarios) > 1:
            extra = [a for k, v in (("--model", model), ("--max-auto-reply", max_auto_reply), ("--human", mode),
                                    ("--workspace", workspace)) if v is not None for a in (k, str(v))]
            raise typer.Exit(cli.run_batch(scenarios, extra, jobs))
        opts = RunOptions(model=model, max_auto_reply=max_auto_reply, human=mode, workspaces=workspace)
        raise typer.Exit(cli.run_one(scenarios[0], opts, json_out, human=human_for_mode(cli.console)))


@app.command()
def runs(scenario: Optional[str] = typer.Argument(None, help="Only this scenario's runs."),
         workspace: Optional[Path] = typer.Option(None, help="Root folder of run folders.")) -> None:
    """List saved runs with status, turns and time."""
    from agents.paths import default_workspaces

    with cli.cli_errors():
        cli.list_runs(workspace or default_workspaces(), scenario)


@sandbox_app.command("build")
def sandbox_build(image: str = typer.Option("codeduet-sandbox:latest"),
                  method: str = typer.Option("auto", help="auto | mmdebstrap | dockerfile")) -> None:
    """Build the sandbox image locally (no registry needed)."""
    from agents.sandbox.image import build_image

    with cli.cli_errors():
        image_id = build_image(image, method=method, console=cli.console)
        cli.console.print(f"built {image} ({image_id[:19]})")


@sandbox_app.command("status")
def sandbox_status(image: str = typer.Option("codeduet-sandbox:latest")) -> None:
    """Whether the image exists, and the limits a run applies."""
    from agents.sandbox.status import print_status

    with cli.cli_errors():
        raise typer.Exit(print_status(image, cli.console))


@sandbox_app.command("clean")
def sandbox_clean(all_: bool = typer.Option(False, "--all", help="Also containers of live runs."),
                  image: bool = typer.Option(False, "--image", help="Also remove the sandbox image.")) -> None:
    """Remove orphaned codeduet containers (and optionally the image)."""
    from agents.sandbox.status import clean

    with cli.cli_errors():
        clean(cli.console, everything=all_, remove_image=image)


@model_app.command("pull")
def model_pull(path: Optional[Path] = typer.Option(None, help="Target file (default: the cache folder).")) -> None:
    """Download/assemble and verify the local model."""
    from agents.models.download import pull_model

    with cli.cli_errors():
        cli.console.print(f"model ready: {pull_model(path, console=cli.console)}")


@model_app.command("status")
def model_status() -> None:
    """Model path, size, hash check and llama.cpp build."""
    from agents.models.download import model_status as status

    with cli.cli_errors():
        for key, value in status().items():
            cli.console.print(f"{key}: {value}", soft_wrap=True)


if __name__ == "__main__":
    app()
