"""`codeduet bench`: the benchmarks a user runs from an installed codeduet (HumanEval, the sandbox's overhead, the
command line's startup, the model's speed, aider's polyglot/Exercism); the rest are scripts in benchmarks/."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from agents.cli.common import cli_errors, console, install_signal_handlers
from agents.loop.errors import BadInputError

bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: HumanEval single vs loop, sandbox overhead, LLM speed.")


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
                                                         "conversation, not from the loop's first reply."),
                    team: bool = typer.Option(False, "--team", help="Loop: the Planner → Developer → QA team "
                                              "instead of the pair (with --mode loop).")) -> None:
    """HumanEval pass@1: single pass vs the self-debug loop (the product's strategy), side by side. The defaults
    live with the benchmark (agents/bench/humaneval/config.py)."""
    from agents.bench.humaneval.config import BenchConfig, parse_only
    from agents.bench.humaneval.run import main
    from agents.loop.run_options import parse_overrides

    install_signal_handlers()
    with cli_errors():
        given = {k: v for k, v in dict(limit=limit, offset=offset, mode=mode, max_auto_reply=max_auto_reply,
                                       attempts=attempts, model=model, out=out).items() if v is not None}
        raise typer.Exit(main(console, BenchConfig(**given, resume=resume, separate_single=separate_single, team=team,
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
                                                               "exercise (codeduet's protocol: 600 unless given)."),
                   protocol: str = typer.Option("aider", help="aider (one reply, one repair that sees the test "
                                                "output, no candidates) | codeduet (the product's own loop: "
                                                "candidates, attempts, a time budget) | both (each exercise under "
                                                "each; both tables printed).")) -> None:
    """aider's polyglot benchmark through the product: each Exercism exercise a scenario with its tests hidden,
    two tries (the first reply, then one repair turn that sees the test output), or codeduet's own loop. A go.mod
    directive newer than the image's Go is lowered to it; an example that needs a newer compiler is listed apart."""
    from agents.bench.exercism_run import main

    install_signal_handlers()
    with cli_errors():
        raise typer.Exit(main(console, track=track, languages=languages, only=only, limit=limit, sample=sample,
                              model=model, reply=reply, out=out, max_seconds=max_seconds, protocol=protocol))
