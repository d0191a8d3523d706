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
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: HumanEval single vs loop, sandbox overhead, LLM speed.")
app.add_typer(model_app, name="model")
app.add_typer(bench_app, name="bench")


@app.command()
def run(scenarios: List[Path] = typer.Argument(..., help="One or more scenario YAML files."),
        model: Optional[str] = typer.Option(None, help="Model name from configs/llm.yaml."),
        max_auto_reply: Optional[int] = typer.Option(None, min=0, help="Override max_consecutive_auto_reply."),
        human: Optional[str] = typer.Option(None, help="Override human_input_mode: always|terminate|never."),
        attempts: Optional[int] = typer.Option(None, min=1, help="Override strategy.attempts (fresh conversations)."),
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
                                    ("--attempts", attempts), ("--workspace", workspace))
                     if v is not None for a in (k, str(v))]
            raise typer.Exit(cli.run_batch(scenarios, extra, jobs))
        opts = RunOptions(model=model, max_auto_reply=max_auto_reply, human=mode, workspaces=workspace,
                          attempts=attempts)
        raise typer.Exit(cli.run_one(scenarios[0], opts, json_out, human=human_for_mode(cli.console)))


@app.command()
def chat(model: Optional[str] = typer.Option(None, help="Model name from configs/llm.yaml."),
         human: str = typer.Option("always", help="always|terminate|never"),
         max_auto_reply: int = typer.Option(10, min=0), workspace: Optional[Path] = typer.Option(None)) -> None:
    """Free-form session: type a task, then steer, approve or stop the loop."""
    from agents.hitl import chat_command

    cli.install_signal_handlers()
    with cli.cli_errors():
        raise typer.Exit(chat_command(cli.console, model=model, human=human, max_auto_reply=max_auto_reply,
                                      workspace=workspace))


@app.command()
def replay(target: Path = typer.Argument(..., help="A run folder or its transcript.json."),
           step: bool = typer.Option(False, help="Wait for Enter between messages."),
           execute: bool = typer.Option(False, help="Re-run every block in a fresh sandbox; report match/diverged."),
           html: Optional[Path] = typer.Option(None, help="Write one self-contained HTML page."),
           resume: bool = typer.Option(False, help="Continue the conversation with the LLM in a new run folder."),
           message: Optional[str] = typer.Option(None, help="With --resume: the first new message."),
           model: Optional[str] = typer.Option(None, help="With --resume: another model."),
           max_auto_reply: Optional[int] = typer.Option(None, min=0, help="With --resume: reply limit."),
           image: Optional[str] = typer.Option(None, help="With --execute: another sandbox image.")) -> None:
    """Show a saved run; or re-execute it, export it to HTML, or resume it."""
    from agents.replay.cli import replay_command

    cli.install_signal_handlers()
    with cli.cli_errors():
        raise typer.Exit(replay_command(cli.console, target, step=step, execute=execute, html=html, resume=resume,
                                        message=message, model=model, max_auto_reply=max_auto_reply, image=image))


@bench_app.command("humaneval")
def bench_humaneval(limit: Optional[int] = typer.Option(None), offset: int = typer.Option(0),
                    mode: str = typer.Option("both", help="single|loop|both"),
                    max_auto_reply: Optional[int] = typer.Option(None, min=0, help="Loop: feedback rounds per "
                                                                 "attempt (default: the bench's, see BENCHMARKS)."),
                    attempts: Optional[int] = typer.Option(None, min=1, help="Loop: fresh conversations at most "
                                                           "(default: the product's strategy.attempts)."),
                    model: Optional[str] = typer.Option(None), out: Optional[Path] = typer.Option(None),
                    resume: bool = typer.Option(False),
                    separate_single: bool = typer.Option(False, help="both: generate the single pass in its own "
                                                         "conversation, not from the loop's first reply.")) -> None:
    """HumanEval pass@1: single pass vs the self-debug loop (the product's strategy), side by side."""
    from agents.bench.humaneval import main

    cli.install_signal_handlers()
    with cli.cli_errors():
        raise typer.Exit(main(cli.console, limit=limit, offset=offset, mode=mode, max_auto_reply=max_auto_reply,
                              attempts=attempts, model=model, out=out, resume=resume,
                              separate_single=separate_single))


@bench_app.command("sandbox")
def bench_sandbox(n: int = typer.Option(50, min=5), out: Optional[Path] = typer.Option(None)) -> None:
    """Per-block latency: our executor vs docker exec vs docker run vs a local subprocess."""
    from agents.bench.sandbox_overhead import main

    with cli.cli_errors():
        raise typer.Exit(main(cli.console, n=n, out=out))


@bench_app.command("llm")
def bench_llm() -> None:
    """Tokens/s through our llama.cpp client vs raw llama-cpp-python; TTFT; peak RSS."""
    from agents.bench.llm_throughput import main

    with cli.cli_errors():
        main(cli.console)


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
