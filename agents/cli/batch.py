"""A batch of scenarios: each in its own `codeduet run --json` process (a thread pool of --jobs), or as Ray tasks
(--ray, agents/cli/scaleout/); a line as each finishes, then the summary table and the batch's exit code."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from rich.table import Table

from agents.cli.common import console
from agents.loop.errors import BadInputError, batch_exit_code
from agents.record.metrics import NOT_RUN, batch_metrics, metrics_lines
from agents.record.paths import default_workspaces


def refuse_attended_batch(paths: list[Path], mode: str | None) -> None:
    """A batch runs unattended: --human always|terminate, or a scenario whose human_input_mode asks a person, is a
    one-line error before anything starts (a person steers one run at a time, in the foreground)."""
    from agents.scenario.spec import load_scenario

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
    from agents.scenario.spec import load_scenario

    for p in paths:  # validate everything before starting anything
        load_scenario(p)
    # each child is `python -m agents`, this very package first on its path (no run.py needed, e.g. after pip install)
    package_parent = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)}
    if jobs > 1:  # llama.cpp's spinning OpenMP threads collapse when several runs share the cores
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")

    children = RunningChildren()

    def one(path: Path) -> dict[str, Any] | None:
        proc = children.start([sys.executable, "-m", "agents", "run", str(path), "--json", *extra_args], env)
        if proc is None:  # the batch was interrupted before this scenario's turn
            return None
        out, err = proc.communicate()
        children.done(proc)
        try:
            data = json.loads(out.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            data = {"status": "error", "reason": (err.strip().splitlines() or ["no output"])[-1]}
        data.update(scenario=str(path), exit_code=proc.returncode)
        return data

    rows = []
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        with console.status(f"running {len(paths)} scenarios with {jobs} job(s)…"):
            for row in pool.map(one, paths):
                rows.append(row)
                batch_progress(row, as_json)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM to this process: its runs end as their own Ctrl-C ends them
        children.interrupt()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return finish_batch(rows, as_json)


class RunningChildren:
    """The batch's `codeduet run` processes, each in a session of its own: a terminal's Ctrl-C reaches the batch
    alone, which passes it on once to each run (two would force a run's exit before it saved and cleaned up), and
    starts no more."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: set[subprocess.Popen] = set()
        self.stopping = False

    def start(self, argv: list[str], env: dict[str, str]) -> subprocess.Popen | None:
        with self.lock:
            if self.stopping:
                return None
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                    start_new_session=True)
            self.running.add(proc)
            return proc

    def done(self, proc: subprocess.Popen) -> None:
        with self.lock:
            self.running.discard(proc)

    def interrupt(self) -> None:
        with self.lock:
            self.stopping = True
            for proc in self.running:
                proc.send_signal(signal.SIGINT)


def run_ray_batch(paths: list[Path], address: str, sandboxes: int | None, overrides: dict[str, Any],
                  workspaces: Path | None, as_json: bool = False) -> int:
    """Run several scenarios as Ray tasks (agents/cli/scaleout/ray_batch.py); the same progress, table and --json."""
    from agents.cli.scaleout.ray_batch import import_ray, run_on_ray
    from agents.scenario.spec import load_scenario

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
    """The summary table, the team paper's metrics and the count; with --json (whose lines were printed as runs
    finished) one last line with the metrics. The exit code."""
    ok = sum(r["status"] == "success" for r in rows)
    metrics = batch_metrics([r.get("metrics") or NOT_RUN for r in rows])
    if as_json:  # after one line per scenario, the batch's own: {"batch": {runs, metrics...}}
        print(json.dumps({"batch": metrics}), flush=True)
        return batch_exit_code(rows)
    from agents.record.display import show_table

    table = Table(title="batch summary")
    cols = ("scenario", "status", "attempts", "turns", "executions", "seconds", "run_dir")
    for col in cols:
        table.add_column(col, no_wrap=col in ("scenario", "status", "run_dir"))
    for r in rows:
        table.add_row(*(str(r.get(c, "")) for c in cols))
    show_table(console, table, optional=("executions", "attempts", "seconds", "turns"))
    for line in metrics_lines(metrics):
        console.print(line, soft_wrap=True, highlight=False)
    console.print(f"batch: {ok}/{len(rows)} succeeded")
    return batch_exit_code(rows)
