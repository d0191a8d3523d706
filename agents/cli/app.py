"""The command line: the typer app behind the `codeduet` console script and run.py, and what its commands do."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from agents.bench.cli import bench_app
from agents.cli.batch import refuse_attended_batch, run_batch, run_ray_batch
from agents.cli.chat import chat_command
from agents.cli.common import (
    cli_errors,
    console,
    err_console,
    install_signal_handlers,
    language_list,
    print_ending,
    run_display,
    session_name,
    warn,
)
from agents.loop.errors import EXIT_BAD_INPUT, BadInputError
from agents.loop.extras import needs
from agents.models.cli import model_app
from agents.record.paths import MODELS_TABLE_ORDER, default_workspaces
from agents.replay.listing import list_runs
from agents.sandbox.cli import sandbox_app

__all__ = ["app", "main", "run_one"]


def human_input(console: Console) -> Any:
    """How `run` asks a person: at this terminal, or through the run folder when `codeduet ui` started the run
    ($CODEDUET_HUMAN_CHANNEL=files, agents/loop/hitl.py human_via_files)."""
    from agents.loop.hitl import CHANNEL_ENV, human_for_mode, human_via_files

    return human_via_files() if os.environ.get(CHANNEL_ENV) == "files" else human_for_mode(console)


def run_one(path: Path, opts: Any, as_json: bool, human: Any = None) -> int:
    """Run one scenario in this process; print the closing line or the JSON summary."""
    from agents.scenario.spec import load_scenario

    scenario = load_scenario(path)  # bad input is reported before AG2 is imported
    from agents.loop.conversation import run_scenario, until_stopped

    started = time.perf_counter()
    display = run_display(console, as_json)
    result = until_stopped(lambda: run_scenario(scenario, opts, display=display, human=human))
    return print_ending(result, console, time.perf_counter() - started, as_json)


# The typer app: the `codeduet` console script, `python -m agents` and `python run.py` all run it.

WHERE_THINGS_GO = ("Runs go to ./workspaces of the current folder (elsewhere: --workspace or $CODEDUET_WORKSPACES). "
                   f"The model table (--model NAME) is the first found of {MODELS_TABLE_ORDER}.")

app = typer.Typer(add_completion=False, no_args_is_help=True, epilog=WHERE_THINGS_GO,
                  help="Two AG2 agents write, run and fix code in a Docker sandbox.")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(model_app, name="model")
app.add_typer(bench_app, name="bench")


@app.command()
def run(scenarios: List[Path] = typer.Argument(..., metavar="SCENARIO", help="One or more scenario YAML files."),
        model: Optional[str] = typer.Option(None, help="A name in the model table (where: codeduet --help), or an "
                                            "AG2 config list: oai:OAI_CONFIG_LIST?model=gpt-4o (docs/MODELS.md)."),
        max_auto_reply: Optional[int] = typer.Option(None, min=0, help="Override max_consecutive_auto_reply."),
        human: Optional[str] = typer.Option(None, help="Override human_input_mode: always|terminate|never."),
        attempts: Optional[int] = typer.Option(None, min=1, help="Override strategy.attempts (fresh conversations)."),
        max_seconds: Optional[float] = typer.Option(None, min=1, help="Wall-clock budget of each run (overrides "
                                                    "strategy.max_seconds); when spent, the run ends as `timeout`."),
        workspace: Optional[Path] = typer.Option(None, help="Root folder for run folders (default "
                                                  "./workspaces of the current folder)."),
        jobs: Optional[int] = typer.Option(None, min=1, help="Batch: scenarios run at once (each in its own "
                                           "process; default 1). With --ray local: the sandboxes it advertises."),
        ray: Optional[str] = typer.Option(None, metavar="ADDRESS", help="Batch on Ray: local | auto | "
                                          "ray://host:port (needs `pip install 'codeduet\\[ray]'`)."),
        languages: Optional[str] = typer.Option(None, metavar="LANG,...", help="Add languages to the sandbox "
                                                "(c, cpp, go, rust, javascript), as sandbox.languages does."),
        session: Optional[str] = typer.Option(None, metavar="kernel|process", help="Override sandbox.session: "
                                              "kernel runs the Python blocks in one live interpreter."),
        team: bool = typer.Option(False, "--team", help="A Planner → Developer → QA team writes the code (a "
                                  "scenario's own `team:` wins)."),
        baseline: bool = typer.Option(False, "--baseline", help="The paper's static baseline: one reply, run once, "
                                      "judged by the checks, no feedback, no team (docs/STRATEGY.md)."),
        json_out: bool = typer.Option(False, "--json",
                                      help="Print a JSON summary instead of the conversation.")) -> None:
    """Run scenario(s); exit 0 success, 1 failed/max_replies/timeout, 2 bad input, 3 environment, 130 Ctrl-C."""
    from agents.loop.hitl import normalize_mode
    from agents.loop.run_options import RunOptions

    install_signal_handlers()
    with cli_errors():
        mode = normalize_mode(human)
        session = session_name(session)
        if ray is not None:
            raise typer.Exit(run_ray_batch(scenarios, ray, jobs, dict(model=model, max_auto_reply=max_auto_reply,
                                           human=mode, attempts=attempts, max_seconds=max_seconds,
                                           languages=language_list(languages), session=session, team=team,
                                           baseline=baseline),
                                           workspace, json_out))
        if len(scenarios) > 1:
            refuse_attended_batch(scenarios, mode)
            extra = [a for k, v in (("--model", model), ("--max-auto-reply", max_auto_reply), ("--human", mode),
                                    ("--attempts", attempts), ("--max-seconds", max_seconds),
                                    ("--workspace", workspace), ("--languages", languages),
                                    ("--session", session))
                     if v is not None for a in (k, str(v))] + (["--team"] if team else []) + \
                (["--baseline"] if baseline else [])
            raise typer.Exit(run_batch(scenarios, extra, jobs or 1, json_out))
        opts = RunOptions(model=model, max_auto_reply=max_auto_reply, human=mode, workspaces=workspace,
                          attempts=attempts, max_seconds=max_seconds, languages=language_list(languages),
                          session=session, team=team, baseline=baseline)
        raise typer.Exit(run_one(scenarios[0], opts, json_out, human=human_input(console)))


@app.command()
def chat(model: Optional[str] = typer.Option(None, help="A name in the model table (where: codeduet --help)."),
         human: str = typer.Option("always", help="always|terminate|never"),
         max_auto_reply: int = typer.Option(10, min=0), workspace: Optional[Path] = typer.Option(None),
         languages: Optional[str] = typer.Option(None, metavar="LANG,...", help="Toolchains for the tasks: c, cpp, "
                                                 "go, rust, javascript (docs/LANGUAGES.md)."),
         session: Optional[str] = typer.Option(None, metavar="kernel|process", help="kernel: the Python blocks of "
                                               "a task share one live interpreter (variables persist); process: "
                                               "each block is a fresh script. Default: kernel, or process with "
                                               "--languages, --preset or --server."),
         preset: str = typer.Option("", metavar="backend|frontend|web", help="The image a web task needs: its "
                                    "frameworks, Node, Go, a headless browser (docs/WEB.md)."),
         expect: str = typer.Option("", help="Acceptance check: the output must contain this text."),
         check: List[str] = typer.Option([], help="Acceptance check: a command that must exit 0 (repeatable)."),
         server: str = typer.Option("", help="Acceptance check: the command that starts the task's server."),
         port: Optional[int] = typer.Option(None, help="With --server: the port it listens on."),
         request: List[str] = typer.Option([], help="With --server: 'METHOD /path [JSON] -> STATUS [TEXT]' "
                                           "(repeatable).")) -> None:
    """Free-form session: type a task, then steer, approve or stop the loop."""
    from agents.scenario.task_spec import quick_checks

    install_signal_handlers()
    with cli_errors():
        checks = quick_checks(expect, check, server, port, request)
        raise typer.Exit(chat_command(console, model=model, human=human, max_auto_reply=max_auto_reply,
                                      workspace=workspace, languages=language_list(languages),
                                      session=session_name(session) or "", preset=preset, checks=checks))


@app.command(context_settings={"ignore_unknown_options": True})  # `replay -1`: the newest run, not an option
def replay(target: str = typer.Argument(..., metavar="RUN", help="A run folder (or its transcript.json), a run id or "
                                        "a unique prefix of one (see `codeduet runs`), a scenario's folder, name or "
                                        "YAML file (its newest run), or latest / -1 (the newest run; -2 the one "
                                        "before)."),
           step: bool = typer.Option(False, help="Wait for Enter between messages."),
           execute: bool = typer.Option(False, help="Re-run every block in a fresh sandbox; report match/diverged."),
           html: Optional[Path] = typer.Option(None, help="Write one self-contained HTML page."),
           resume: bool = typer.Option(False, help="Continue the conversation with the LLM in a new run folder."),
           message: Optional[str] = typer.Option(None, help="With --resume: the first new message."),
           model: Optional[str] = typer.Option(None, help="With --resume: another model."),
           max_auto_reply: Optional[int] = typer.Option(None, min=0, help="With --resume: reply limit."),
           image: Optional[str] = typer.Option(None, help="With --execute: another sandbox image."),
           workspace: Optional[Path] = typer.Option(None, help="Root folder of run folders, where run ids are "
                                                    "looked up."),
           json_out: bool = typer.Option(False, "--json", help="With --resume: print the JSON summary line (as "
                                         "`run --json` does) instead of the conversation.")) -> None:
    """Show a saved run; or re-execute it, export it to HTML, or resume it."""
    from agents.replay.cli import replay_command

    install_signal_handlers()
    with cli_errors():
        if target.startswith("-") and not target[1:].isdigit():
            raise BadInputError(f"no such option: {target} (see `codeduet replay --help`)")
        raise typer.Exit(replay_command(console, target, root=workspace or default_workspaces(), step=step,
                                        execute=execute, html=html, resume=resume, message=message, model=model,
                                        max_auto_reply=max_auto_reply, image=image, as_json=json_out))


@app.command(context_settings={"ignore_unknown_options": True})  # `export -1`: the newest run, not an option
def export(targets: List[str] = typer.Argument(..., metavar="RUN", help="Runs to export: a run folder, id or "
                                               "prefix, latest / -N, or a folder of runs (a workspaces root, a "
                                               "scenario's or a batch's folder) or a scenario name: all its runs."),
           fmt: str = typer.Option(..., "--format", metavar="inspect|chat|files", help="inspect: an Inspect eval "
                                   "log (`inspect view`); chat: chat-format JSONL for fine-tuning; files: each "
                                   "run's final code in a folder (docs/EXPORT.md)."),
           output: Optional[Path] = typer.Option(None, "--output", "-o", help="Where to write (default "
                                                 "./codeduet-export.eval, .jsonl or codeduet-export/)."),
           status: List[str] = typer.Option([], metavar="STATUS", help="Only runs that ended so: success, failed, "
                                            "max_replies, timeout, interrupted, error (repeatable)."),
           workspace: Optional[Path] = typer.Option(None, help="Root folder of run folders, where run ids are "
                                                    "looked up.")) -> None:
    """Write saved runs in a format other tools read; says what the format drops."""
    from agents.replay.export.cli import export_command

    with cli_errors():
        bad = next((t for t in targets if t.startswith("-") and not t[1:].isdigit()), None)
        if bad:
            raise BadInputError(f"no such option: {bad} (see `codeduet export --help`)")
        raise typer.Exit(export_command(console, targets, fmt, output, status, workspace or default_workspaces(),
                                        warn=warn))


@app.command()
def runs(scenario: Optional[str] = typer.Argument(None, metavar="SCENARIO", help="Only this scenario's runs."),
         n: Optional[int] = typer.Option(None, "-n", min=1, help="Only the N newest runs."),
         workspace: Optional[Path] = typer.Option(None, help="Root folder of run folders (default "
                                                  "./workspaces).")) -> None:
    """List saved runs, newest first, with status, turns, time and path (replay takes the run id or the path)."""
    with cli_errors():
        list_runs(workspace or default_workspaces(), scenario, n)


@app.command()
def ui(host: str = typer.Option("127.0.0.1", help="Address to listen on (any other than localhost needs --token)."),
       port: int = typer.Option(8765, min=1, max=65535),
       workspace: Optional[Path] = typer.Option(None, help="Root folder of run folders (default ./workspaces)."),
       scenarios: Path = typer.Option(Path("scenarios"), help="Folder of scenario files the page can start."),
       token: Optional[str] = typer.Option(None, envvar="CODEDUET_UI_TOKEN",
                                           help="Required of every request (needed beyond localhost).")) -> None:
    """Watch, steer and review runs in the browser: the runs, a run live, start, stop, steer, compare, replay."""
    with cli_errors():
        with needs("ui", "codeduet ui"):
            import uvicorn

            from agents.ui.app import create_app
            from agents.ui.security import is_local

        if not is_local(host) and not token:
            raise BadInputError(f"--host {host} is reachable from other machines: give --token (or "
                                "$CODEDUET_UI_TOKEN), which every request must then carry")
        root = Path(workspace or default_workspaces())
        console.print(f"codeduet ui: http://{host}:{port}/" + (f"?token={token}" if token else "")
                      + f"  (runs under {root}; Ctrl-C stops it)", soft_wrap=True)
        uvicorn.run(create_app(root, token=token, host=host, scenarios=scenarios), host=host, port=port,
                    log_level="warning")


PLACEHOLDERS = {"int": "N", "float": "N", "Path": "PATH", "str": "TEXT"}
"""What --help shows after an option that takes a value, by its Python type (an option may name its own)."""


def what_to_type(command: Any) -> Any:
    """The click command of `app` with what a person types in its --help, as typer and click used to show it:
    `--attempts N [x>=1]`, `SCENARIO...`, a flag alone, where typer 0.29 shows `<int range>`, `{scenarios}...`,
    `<list[Path]>` and `<bool>`."""
    try:
        from typer._click import Context
        from typer.core import TyperArgument
    except ImportError:  # an older typer (before 0.29) shows what a person types itself
        return command
    for param in [*command.params, command.get_help_option(Context(command))]:
        if isinstance(param, TyperArgument):  # `SCENARIO...` or `[SCENARIO]`, as click writes them; no type
            shown = param.display_name_raw if param.required else f"[{param.display_name_raw}]"
            shown += "..." if param.nargs != 1 else ""
            param._usage_display_name = lambda shown=shown: shown  # type: ignore[method-assign]
            param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
        elif param is not None and param.metavar is None:
            param.metavar = "" if param.is_flag else PLACEHOLDERS.get(param.bare_type(), "VALUE")
    for sub in getattr(command, "commands", {}).values():
        what_to_type(sub)
    return command


def _is(exc: BaseException, name: str) -> bool:
    """Whether exc is click's exception `name` (typer ships its own copy of click, so match the class by name)."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def main() -> None:
    """Entry point of the `codeduet` console script: a bad flag or value is one line and exit 2, like every other
    bad input (typer would draw a box around it)."""
    try:
        code = what_to_type(typer.main.get_command(app)).main(standalone_mode=False)
    except Exception as exc:
        if _is(exc, "NoArgsIsHelpError"):  # `codeduet` or `codeduet sandbox` alone: the help
            ctx = getattr(exc, "ctx", None)
            print(ctx.get_help() if ctx is not None else "")
            raise SystemExit(0) from None
        if not _is(exc, "UsageError"):
            raise
        ctx = getattr(exc, "ctx", None)
        command = ctx.command_path if ctx is not None else "codeduet"
        err_console.print(f"[red]error:[/] {escape(exc.format_message())} (see `{command} --help`)",  # type: ignore
                          soft_wrap=True)
        raise SystemExit(EXIT_BAD_INPUT) from None
    raise SystemExit(code if isinstance(code, int) else 0)
