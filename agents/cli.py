"""The command line: the typer app behind the `codeduet` console script and run.py, and what its commands do."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any, Iterator, List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agents.defaults import SANDBOX_IMAGE
from agents.errors import BadInputError, CodeduetError, ModelUnavailable
from agents.paths import MODELS_TABLE_ORDER
from agents.status import EXIT_BAD_INPUT, EXIT_INTERRUPTED, batch_exit_code
from agents.terminal import close_run, console, err_console, report_result, run_display, summary

__all__ = ["console", "err_console", "cli_errors", "install_signal_handlers", "run_one", "run_batch", "chat_command",
           "list_runs", "summary"]


@contextmanager
def cli_errors() -> Iterator[None]:
    """Turn CodeduetError into one line on stderr and its exit code; Ctrl-C into 130."""
    try:
        yield
    except CodeduetError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/]")
        raise SystemExit(EXIT_INTERRUPTED) from None


def install_signal_handlers() -> None:
    """SIGTERM behaves like Ctrl-C; a second Ctrl-C forces the exit."""
    state = {"count": 0}

    def on_signal(signum: int, frame: Any) -> None:
        state["count"] += 1
        if state["count"] > 1:
            os._exit(EXIT_INTERRUPTED)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


def human_input(console: Console) -> Any:
    """How `run` asks a person: at this terminal, or through the run folder when `codeduet ui` started the run
    ($CODEDUET_HUMAN_CHANNEL=files, agents/hitl.py human_via_files)."""
    from agents.hitl import CHANNEL_ENV, human_for_mode, human_via_files

    return human_via_files() if os.environ.get(CHANNEL_ENV) == "files" else human_for_mode(console)


def run_one(path: Path, opts: Any, as_json: bool, human: Any = None) -> int:
    """Run one scenario in this process; print the closing line or the JSON summary."""
    from agents.scenario import load_scenario

    scenario = load_scenario(path)  # bad input is reported before AG2 is imported
    from agents.conversation import run_scenario, until_stopped

    started = time.perf_counter()
    display = run_display(console, as_json)
    result = until_stopped(lambda: run_scenario(scenario, opts, display=display, human=human))
    return close_run(result, console, time.perf_counter() - started, as_json)


def chat_command(console: Console, model: str | None, human: str, max_auto_reply: int,
                 workspace: Path | None, languages: list[str] | None = None) -> int:
    """`codeduet chat`: the person types a task, the loop runs with them in it, and then they can type the next one;
    each task is its own run. 'exit' (or a closed stdin after a run) ends it with the last run's exit code."""
    from agents.conversation import RunOptions, run_scenario, until_stopped
    from agents.display import ConsoleDisplay
    from agents.hitl import EXIT_WORDS, human_for_mode, normalize_mode, read_task
    from agents.scenario import Scenario, UserProxyConfig

    mode = normalize_mode(human) or "ALWAYS"
    code, runs = 0, 0
    while True:
        try:
            task = read_task(console)
            while not task:
                console.print("the task is empty: type what the assistant should do, or 'exit'")
                task = read_task(console)
        except BadInputError:
            if runs:  # stdin closed at the next task prompt: the session is over
                return code
            raise
        if task.lower() in EXIT_WORDS:
            return code
        scenario = Scenario(name="chat", description="free-form session from `codeduet chat`", task=task,
                            user_proxy=UserProxyConfig(human_input_mode=mode,
                                                       max_consecutive_auto_reply=max_auto_reply))
        opts = RunOptions(model=model, max_auto_reply=max_auto_reply, human=mode, workspaces=workspace,
                          languages=languages)
        result = until_stopped(lambda s=scenario, o=opts: run_scenario(s, o, display=ConsoleDisplay(console),
                                                                       human=human_for_mode(console)))
        code, runs = report_result(result, console), runs + 1
        if result.status == "interrupted":
            return code
        console.print("[dim]the next task starts a new run (its own folder); 'exit' ends the session[/]")


def refuse_attended_batch(paths: list[Path], mode: str | None) -> None:
    """A batch runs unattended: --human always|terminate, or a scenario whose human_input_mode asks a person, is a
    one-line error before anything starts (a person steers one run at a time, in the foreground)."""
    from agents.scenario import load_scenario

    if mode not in (None, "NEVER"):
        raise BadInputError(f"--human {mode.lower()} asks a person at this terminal, and a batch runs unattended: "
                            "run one scenario at a time to steer it, or use --human never")
    if mode is None:
        for p in paths:
            asks = load_scenario(p).user_proxy.human_input_mode.upper()
            if asks != "NEVER":
                raise BadInputError(f"{p}: human_input_mode {asks} asks a person, and a batch runs unattended: "
                                    "run it alone to steer it, or add --human never to the batch")


def run_batch(paths: list[Path], extra_args: list[str], jobs: int, as_json: bool = False) -> int:
    """Run several scenarios, each as its own `codeduet run --json` process, and print a summary table."""
    from agents.scenario import load_scenario

    for p in paths:  # validate everything before starting anything
        load_scenario(p)
    # each child is `python -m agents`, this very package first on its path (no run.py needed, e.g. after pip install)
    package_parent = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)}
    if jobs > 1:  # llama.cpp's spinning OpenMP threads collapse when several runs share the cores
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")

    def one(path: Path) -> dict[str, Any]:
        proc = subprocess.run([sys.executable, "-m", "agents", "run", str(path), "--json", *extra_args],
                              capture_output=True, text=True, env=env)
        try:
            data = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            data = {"status": "error", "reason": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
        data.update(scenario=str(path), exit_code=proc.returncode)
        return data

    rows = []
    with console.status(f"running {len(paths)} scenarios with {jobs} job(s)…"):
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for row in pool.map(one, paths):
                rows.append(row)
                batch_progress(row, as_json)
    return finish_batch(rows, as_json)


def run_ray_batch(paths: list[Path], address: str, sandboxes: int | None, overrides: dict[str, Any],
                  workspaces: Path | None, as_json: bool = False) -> int:
    """Run several scenarios as Ray tasks (agents/scaleout/ray_batch.py); the same progress, table and --json."""
    from agents.paths import default_workspaces
    from agents.scaleout.ray_batch import import_ray, run_on_ray
    from agents.scenario import load_scenario

    scenarios = [(p, load_scenario(p)) for p in paths]  # validate everything before starting anything
    refuse_attended_batch(paths, overrides.get("human"))
    import_ray()
    out = sys.stdout
    with redirect_stdout(sys.stderr):  # Ray prints its own notices ("a worker died ...") on stdout
        rows = run_on_ray(scenarios, address, sandboxes, overrides, Path(workspaces or default_workspaces()),
                          lambda row: batch_progress(row, as_json, out))
    return finish_batch(rows, as_json)


def batch_progress(row: dict[str, Any], as_json: bool, out: Any = None) -> None:
    """One line as each scenario of a batch finishes: `  <scenario>: <status>`, or its JSON summary."""
    line = json.dumps(row) if as_json else f"  {row['scenario']}: {row['status']}"
    print(line, file=out or sys.stdout, flush=True)


def finish_batch(rows: list[dict[str, Any]], as_json: bool) -> int:
    """The summary table and count (not with --json, whose lines were printed as runs finished); the exit code."""
    ok = sum(r["status"] == "success" for r in rows)
    if not as_json:
        from agents.display import show_table

        table = Table(title="batch summary")
        cols = ("scenario", "status", "attempts", "turns", "executions", "seconds", "run_dir")
        for col in cols:
            table.add_column(col, no_wrap=col in ("scenario", "status", "run_dir"))
        for r in rows:
            table.add_row(*(str(r.get(c, "")) for c in cols))
        show_table(console, table, optional=("executions", "attempts", "seconds", "turns"))
        console.print(f"batch: {ok}/{len(rows)} succeeded")
    return batch_exit_code(rows)


def list_runs(root: Path, scenario: str | None, limit: int | None = None) -> None:
    """Table of saved runs, newest first: run id (it starts with the start time), scenario, status, counts, path."""
    from agents.display import show_table
    from agents.replay.find import find_runs
    from agents.replay.timeline import duration
    from agents.transcript import load_transcript

    dirs = find_runs(root, scenario)
    base = root / scenario if scenario else root
    if not dirs:
        console.print(f"no runs under {base}", soft_wrap=True)
        return
    shown = dirs[:limit] if limit else dirs
    table = Table(title=f"runs under {base}, newest first" + (f" ({len(shown)} of {len(dirs)})"
                                                                if len(shown) < len(dirs) else ""))
    for col in ("run", "scenario", "status", "attempts", "turns", "executions", "time", "path"):
        table.add_column(col, no_wrap=col in ("run", "scenario", "status", "path"))
    for d in shown:
        try:
            t = load_transcript(d)
        except CodeduetError:
            table.add_row(d.name, d.parent.name, "unreadable", "", "", "", "", shown_path(d))
            continue
        tot = t.get("totals") or {}
        attempts = str(tot.get("attempts") or 1) + (f" (kept {t['chosen_attempt']})"
                                                     if (tot.get("attempts") or 1) > 1 else "")
        table.add_row(d.name, d.parent.name, t.get("status", "?"), attempts, str(tot.get("turns", "")),
                      str(tot.get("executions", "")), duration(tot.get("seconds")), shown_path(d))
    show_table(console, table, optional=("executions", "attempts", "time", "turns"))


def shown_path(path: Path) -> str:
    """A path relative to the current folder when it is below it, else absolute: what a person types next."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# The typer app: the `codeduet` console script, `python -m agents` and `python run.py` all run it.

WHERE_THINGS_GO = ("Runs go to ./workspaces of the current folder (elsewhere: --workspace or $CODEDUET_WORKSPACES). "
                   f"The model table (--model NAME) is the first found of {MODELS_TABLE_ORDER}.")

app = typer.Typer(add_completion=False, no_args_is_help=True, epilog=WHERE_THINGS_GO,
                  help="Two AG2 agents write, run and fix code in a Docker sandbox.")
sandbox_app = typer.Typer(no_args_is_help=True, help="Build, inspect and clean the sandbox image and containers.")
model_app = typer.Typer(no_args_is_help=True, help="Get and inspect the embedded local model.")
app.add_typer(sandbox_app, name="sandbox")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: HumanEval single vs loop, sandbox overhead, LLM speed.")
app.add_typer(model_app, name="model")
app.add_typer(bench_app, name="bench")


def language_list(text: str | None) -> list[str] | None:
    """`--languages c,go` as names (aliases such as c++ or js accepted); BadInputError on an unknown one."""
    if text is None:
        return None
    from agents.languages import normalize

    try:
        return list(normalize([part for part in text.replace(",", " ").split() if part]))
    except ValueError as exc:
        raise BadInputError(f"--languages: {exc}") from None


@app.command()
def run(scenarios: List[Path] = typer.Argument(..., help="One or more scenario YAML files."),
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
        json_out: bool = typer.Option(False, "--json",
                                      help="Print a JSON summary instead of the conversation.")) -> None:
    """Run scenario(s); exit 0 success, 1 failed/max_replies/timeout, 2 bad input, 3 environment, 130 Ctrl-C."""
    from agents.hitl import normalize_mode
    from agents.run_options import RunOptions

    install_signal_handlers()
    with cli_errors():
        mode = normalize_mode(human)
        if ray is not None:
            raise typer.Exit(run_ray_batch(scenarios, ray, jobs, dict(model=model, max_auto_reply=max_auto_reply,
                                           human=mode, attempts=attempts, max_seconds=max_seconds,
                                           languages=language_list(languages)), workspace, json_out))
        if len(scenarios) > 1:
            refuse_attended_batch(scenarios, mode)
            extra = [a for k, v in (("--model", model), ("--max-auto-reply", max_auto_reply), ("--human", mode),
                                    ("--attempts", attempts), ("--max-seconds", max_seconds),
                                    ("--workspace", workspace), ("--languages", languages))
                     if v is not None for a in (k, str(v))]
            raise typer.Exit(run_batch(scenarios, extra, jobs or 1, json_out))
        opts = RunOptions(model=model, max_auto_reply=max_auto_reply, human=mode, workspaces=workspace,
                          attempts=attempts, max_seconds=max_seconds, languages=language_list(languages))
        raise typer.Exit(run_one(scenarios[0], opts, json_out, human=human_input(console)))


@app.command()
def chat(model: Optional[str] = typer.Option(None, help="A name in the model table (where: codeduet --help)."),
         human: str = typer.Option("always", help="always|terminate|never"),
         max_auto_reply: int = typer.Option(10, min=0), workspace: Optional[Path] = typer.Option(None),
         languages: Optional[str] = typer.Option(None, metavar="LANG,...", help="Toolchains for the tasks: c, cpp, "
                                                 "go, rust, javascript (docs/LANGUAGES.md).")) -> None:
    """Free-form session: type a task, then steer, approve or stop the loop."""
    install_signal_handlers()
    with cli_errors():
        raise typer.Exit(chat_command(console, model=model, human=human, max_auto_reply=max_auto_reply,
                                      workspace=workspace, languages=language_list(languages)))


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
    from agents.paths import default_workspaces
    from agents.replay.cli import replay_command

    install_signal_handlers()
    with cli_errors():
        if target.startswith("-") and not target[1:].isdigit():
            raise BadInputError(f"no such option: {target} (see `codeduet replay --help`)")
        raise typer.Exit(replay_command(console, target, root=workspace or default_workspaces(), step=step,
                                        execute=execute, html=html, resume=resume, message=message, model=model,
                                        max_auto_reply=max_auto_reply, image=image, as_json=json_out))


@bench_app.command("humaneval")
def bench_humaneval(limit: Optional[int] = typer.Option(None, help="Problems to run (default: all 164)."),
                    offset: Optional[int] = typer.Option(None, min=0, help="Index of the first problem (default 0)."),
                    mode: Optional[str] = typer.Option(None, help="single|loop|both (default both)."),
                    max_auto_reply: Optional[int] = typer.Option(None, min=0, help="Loop: feedback rounds per "
                                                                 "attempt (default 2)."),
                    attempts: Optional[int] = typer.Option(None, min=1, help="Loop: fresh conversations at most "
                                                           "(default: the product's strategy.attempts)."),
                    strategy: Optional[List[str]] = typer.Option(None, metavar="KEY=VALUE",
                                                                 help="Loop: override a strategy: key "
                                                                      "(repeatable), e.g. prose_reply=reask."),
                    only: Optional[str] = typer.Option(None, help="Only these problem numbers, comma-separated "
                                                       "(e.g. 10,32), within the --offset/--limit slice."),
                    model: Optional[str] = typer.Option(None), out: Optional[Path] = typer.Option(None),
                    resume: bool = typer.Option(False),
                    separate_single: bool = typer.Option(False, help="both: generate the single pass in its own "
                                                         "conversation, not from the loop's first reply.")) -> None:
    """HumanEval pass@1: single pass vs the self-debug loop (the product's strategy), side by side. The defaults
    live with the benchmark (agents/bench/humaneval/config.py)."""
    from agents.bench.humaneval.config import BenchConfig, parse_only
    from agents.bench.humaneval.run import main
    from agents.run_options import parse_overrides

    install_signal_handlers()
    with cli_errors():
        given = {k: v for k, v in dict(limit=limit, offset=offset, mode=mode, max_auto_reply=max_auto_reply,
                                       attempts=attempts, model=model, out=out).items() if v is not None}
        raise typer.Exit(main(console, BenchConfig(**given, resume=resume, separate_single=separate_single,
                                                   strategy=parse_overrides(strategy or []) or None,
                                                   only=parse_only(only))))


@bench_app.command("sandbox")
def bench_sandbox(n: int = typer.Option(50, min=5), out: Optional[Path] = typer.Option(None)) -> None:
    """Per-block latency: our executor vs docker exec vs docker run vs a local subprocess."""
    from agents.bench.sandbox_overhead import main

    with cli_errors():
        raise typer.Exit(main(console, n=n, out=out))


@bench_app.command("startup")
def bench_startup(n: int = typer.Option(20, min=3, help="Timed rounds (each runs every command once)."),
                  out: Optional[Path] = typer.Option(None, help="Also write the numbers to this JSON file.")) -> None:
    """Wall time of --help, runs, replay RUN and a bad run as fresh processes, against `python -c pass`."""
    from agents.bench.startup import main

    with cli_errors():
        raise typer.Exit(main(console, n=n, out=out))


@bench_app.command("llm")
def bench_llm(parallel: Optional[str] = typer.Option(None, "--parallel", metavar="N,N,...",
                                                     help="Decode N replies together for each N (e.g. 1,2,4,8): "
                                                          "aggregate and per-sequence tok/s, TTFT, RSS."),
              max_tokens: int = typer.Option(128, min=8, help="With --parallel: new tokens per sequence."),
              server: bool = typer.Option(False, "--server", help="The in-process model against the same GGUF "
                                          "behind llama.cpp's OpenAI server: TTFT and tok/s, cold and warm."),
              ) -> None:
    """Tokens/s through our llama.cpp client vs raw llama-cpp-python; TTFT; peak RSS (--parallel: batched)."""
    with cli_errors():
        if server:
            from agents.bench.llm_server import main as server_main

            server_main(console, max_tokens=max(max_tokens, 256))
            return
        if parallel:
            from agents.bench.llm_parallel import main as parallel_main

            try:
                ns = [int(x) for x in parallel.split(",") if x.strip()]
            except ValueError:
                raise BadInputError(f"--parallel {parallel!r}: give counts like 1,2,4,8") from None
            if not ns or min(ns) < 1 or max(ns) > 16:
                raise BadInputError(f"--parallel {parallel!r}: each count from 1 to 16")
            parallel_main(console, ns=ns, max_tokens=max_tokens)
            return
        from agents.bench.llm_throughput import main

        main(console)


@bench_app.command("exercism")
def bench_exercism(track: Path = typer.Option(..., help="A polyglot-benchmark checkout (cpp/, go/, ...) or one "
                                              "Exercism track checkout (exercises/practice/)."),
                   languages: Optional[str] = typer.Option(None, help="Only these tracks, comma-separated "
                                                           "(go,rust,cpp,python,javascript,java)."),
                   limit: Optional[int] = typer.Option(None, min=1, help="Exercises per language (the first N by "
                                                       "name; skipped ones listed among them)."),
                   sample: Optional[int] = typer.Option(None, min=1, help="Exercises per language, evenly spaced "
                                                        "over the names (a fairer slice than the first N)."),
                   only: Optional[str] = typer.Option(None, help="Only these exercises, comma-separated (name or "
                                                      "lang/name)."),
                   model: Optional[str] = typer.Option(None, help="With --reply model: a name in the model table "
                                                       "(default: the table's default, the embedded model)."),
                   reply: str = typer.Option("model", help="model | example (the scripted model sends the "
                                             "example solution: the harness's validation) | stub (it sends the "
                                             "stubs back unchanged: every exercise must fail)."),
                   out: Optional[Path] = typer.Option(None, help="Also write the results JSON to this file."),
                   max_seconds: Optional[float] = typer.Option(None, min=1, help="Wall-clock budget per "
                                                               "exercise.")) -> None:
    """aider's polyglot benchmark through the product: each Exercism exercise a scenario with its tests hidden,
    two tries (the first reply, then one repair turn that sees the test output)."""
    from agents.bench.exercism_run import main

    install_signal_handlers()
    with cli_errors():
        raise typer.Exit(main(console, track=track, languages=languages, only=only, limit=limit, sample=sample,
                              model=model, reply=reply, out=out, max_seconds=max_seconds))


@app.command()
def runs(scenario: Optional[str] = typer.Argument(None, help="Only this scenario's runs."),
         n: Optional[int] = typer.Option(None, "-n", min=1, help="Only the N newest runs."),
         workspace: Optional[Path] = typer.Option(None, help="Root folder of run folders (default "
                                                  "./workspaces).")) -> None:
    """List saved runs, newest first, with status, turns, time and path (replay takes the run id or the path)."""
    from agents.paths import default_workspaces

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
    from agents.paths import default_workspaces
    from agents.ui.security import is_local

    with cli_errors():
        if not is_local(host) and not token:
            raise BadInputError(f"--host {host} is reachable from other machines: give --token (or "
                                "$CODEDUET_UI_TOKEN), which every request must then carry")
        try:
            import uvicorn

            from agents.ui.app import create_app
        except ImportError:
            raise BadInputError("the web UI needs its extra: pip install 'codeduet[ui]' "
                                "(in a checkout: .venv/bin/pip install -e '.[ui]')") from None
        root = Path(workspace or default_workspaces())
        console.print(f"codeduet ui: http://{host}:{port}/" + (f"?token={token}" if token else "")
                      + f"  (runs under {root}; Ctrl-C stops it)", soft_wrap=True)
        uvicorn.run(create_app(root, token=token, host=host, scenarios=scenarios), host=host, port=port,
                    log_level="warning")


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


@model_app.command("pull")
def model_pull(path: Optional[Path] = typer.Option(None, help="Target file (default: the cache folder).")) -> None:
    """Download/assemble and verify the local model."""
    from agents.models.download import pull_model

    with cli_errors():
        console.print(f"model ready: {pull_model(path, console=console)}")


@model_app.command("serve")
def model_serve(port: int = typer.Option(8080, help="Port to listen on."),
                host: str = typer.Option("127.0.0.1", help="Address to listen on (loopback by default)."),
                n_ctx: int = typer.Option(8192, "--n-ctx", help="Context window."),
                n_threads: Optional[int] = typer.Option(None, "--n-threads", help="CPU threads (default: all)."),
                ) -> None:
    """Serve the local model with llama.cpp's OpenAI-compatible server; use it with --model llamacpp-server."""
    from agents.models.download import pull_model
    from agents.models.server import MODEL_ALIAS, LlamaServer

    install_signal_handlers()
    with cli_errors():
        server = LlamaServer(pull_model(console=console), host, port, n_ctx, n_threads)
        try:
            with console.status(f"starting llama.cpp's server at {server.base_url}…"):
                server.start()
                server.wait_ready()
            console.print(f"serving {MODEL_ALIAS} at {server.base_url} (its log: {server.log}); use it with "
                          "--model llamacpp-server; Ctrl-C stops it", soft_wrap=True)
            code = server.process.wait()
        except KeyboardInterrupt:
            server.stop()
            console.print("server stopped")
            return
        finally:
            server.stop()
        raise ModelUnavailable(f"llama.cpp's server exited with code {code}: see {server.log}")


@model_app.command("status")
def model_status() -> None:
    """The model table in use; the local model's path, size, hash check and llama.cpp build."""
    from agents.models.download import model_status as status
    from agents.paths import models_table

    with cli_errors():
        console.print(f"model table: {models_table()}", soft_wrap=True)
        for key, value in status().items():
            console.print(f"{key}: {value}", soft_wrap=True)


def _is(exc: BaseException, name: str) -> bool:
    """Whether exc is click's exception `name` (typer ships its own copy of click, so match the class by name)."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def main() -> None:
    """Entry point of the `codeduet` console script: a bad flag or value is one line and exit 2, like every other
    bad input (typer would draw a box around it)."""
    try:
        code = app(standalone_mode=False)
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
