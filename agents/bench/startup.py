"""`bench startup`: wall time of short CLI commands as fresh processes, against `python -c pass`.

Each command is `python -m agents ...` (what the `codeduet` script runs) in an empty temporary folder with its own
workspaces; `replay RUN` shows a run made first with the scripted model in the real sandbox. Commands are
interleaved round-robin within each round, so drift on a shared machine hits all of them alike.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agents.loop.errors import EnvironmentProblem

WARMUP = 1
SCENARIO = """\
name: startup
task: Print 42.
model: {provider: scripted, replies: ["```python\\nprint(42)\\n```"]}
strategy: {attempts: 1}
"""
BAD_SCENARIO = "task: [\n"


def commands(run_dir: Path) -> dict[str, list[str]]:
    """Label -> argv. The first two are the references: a bare interpreter, and what importing AG2 costs; the last
    re-runs the run's block in a fresh container."""
    cli = [sys.executable, "-m", "agents"]
    return {"python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import autogen'": [sys.executable, "-c", "import autogen"],
            "codeduet --help": [*cli, "--help"],
            "codeduet runs": [*cli, "runs"],
            "codeduet replay RUN": [*cli, "replay", str(run_dir)],
            "codeduet run bad.yaml (exit 2)": [*cli, "run", "bad.yaml"],
            "codeduet replay RUN --execute": [*cli, "replay", str(run_dir), "--execute"]}


def child_env(folder: Path) -> dict[str, str]:
    """This package first on the path (as a checkout or an install), wide plain output, runs under `folder`."""
    package_parent = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "CODEDUET_WORKSPACES": str(folder / "workspaces"),
            "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}


def make_run(folder: Path, env: dict[str, str]) -> Path:
    """One scripted run in the real sandbox, for `replay RUN` to show."""
    (folder / "startup.yaml").write_text(SCENARIO, encoding="utf-8")
    (folder / "bad.yaml").write_text(BAD_SCENARIO, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "agents", "run", "startup.yaml", "--json"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentProblem(f"bench startup: the scripted run it replays failed (exit {proc.returncode}): {tail}")
    return Path(json.loads(lines[-1])["run_dir"])


def measure(argvs: dict[str, list[str]], n: int, folder: Path, env: dict[str, str]) -> dict[str, list[float]]:
    """Seconds per command over n rounds (after WARMUP rounds), each round running every command once."""
    times: dict[str, list[float]] = {label: [] for label in argvs}
    for round_no in range(WARMUP + n):
        for label, argv in argvs.items():
            started = time.perf_counter()
            proc = subprocess.run(argv, cwd=folder, env=env, capture_output=True, timeout=120)
            elapsed = time.perf_counter() - started
            if proc.returncode not in (0, 2):
                raise EnvironmentProblem(f"bench startup: `{label}` exited {proc.returncode}: "
                                         f"{proc.stderr.decode(errors='replace').strip()[-200:]}")
            if round_no >= WARMUP:
                times[label].append(elapsed)
    return times


def summarize(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Median, min and max in ms, and the median over `python -c pass`."""
    base = statistics.median(times["python -c pass"])
    return {label: {"n": len(ts), "median_ms": round(statistics.median(ts) * 1000, 1),
                    "min_ms": round(min(ts) * 1000, 1), "max_ms": round(max(ts) * 1000, 1),
                    "over_python_ms": round((statistics.median(ts) - base) * 1000, 1)}
            for label, ts in times.items()}


def table(summary: dict[str, dict[str, float]]) -> Table:
    t = Table(title="startup: wall time per fresh process (ms)")
    for col in ("command", "median", "min", "max", "over pass"):
        t.add_column(col, justify="left" if col == "command" else "right", no_wrap=True)
    for label, s in summary.items():
        t.add_row(label, f"{s['median_ms']:.0f}", f"{s['min_ms']:.0f}", f"{s['max_ms']:.0f}",
                  f"{s['over_python_ms']:+.0f}")
    return t


def main(console: Console, *, n: int, out: Path | None) -> int:
    """CLI entry: make a run, time every command n times, print the table; with --out also write startup.json."""
    from agents.bench.common import git_commit, machine

    with tempfile.TemporaryDirectory(prefix="codeduet-startup-") as tmp:
        folder = Path(tmp)
        env = child_env(folder)
        with console.status("making a scripted run to replay…"):
            run_dir = make_run(folder, env)
        with console.status(f"timing {n} rounds (+{WARMUP} warm-up)…"):
            summary = summarize(measure(commands(run_dir), n, folder, env))
    info = machine()
    console.print(table(summary))
    console.print(f"{info['cpu']}, {info['cores']} cores, Python {info['python']}, commit {git_commit()}, "
                  f"n={n} (+{WARMUP} warm-up)", soft_wrap=True)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": info,
                                   "commit": git_commit(), "n": n, "warmup": WARMUP, "results": summary},
                                  indent=2), encoding="utf-8")
        console.print(f"written: {out}", soft_wrap=True)
    return 0
