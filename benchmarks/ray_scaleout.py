"""Ray fan-out: a batch of N scripted scenarios with `--jobs J` against `--ray local`, and Ray's overhead per task.

    python -m benchmarks.ray_scaleout [--n 20] [--jobs 2] [--rounds 10] [--out result.json]

Throughput: `run.py run <N scenarios> --json` as a real subprocess, once with `--jobs J`, once with `--ray local`
(which advertises one sandbox per core); wall time, peak concurrent sandboxes (containers labelled with a pid of
the batch's process tree), peak memory of that tree. Overhead: on one warm local Ray instance, a no-op task's
round trip, and for a one-block scripted scenario run one at a time: (submit -> run folder extracted) minus the
run's own seconds; the same for one `run.py run --json` process (what `--jobs` pays), and Ray's start + stop.
It is CPU-heavy: on a shared machine, run it under `flock /tmp/codeduet-cpu.lock`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from agents.bench.common import ms, process_tree
from agents.record.paths import PROJECT_ROOT
from agents.sandbox.docker_executor import LABEL, LABEL_PID
from benchmarks.batch_load import parse_and_describe, write_scenarios

RUN_PY = PROJECT_ROOT / "run.py"


class TreeSampler(threading.Thread):
    """Peaks of the batch's process-tree memory and of the sandboxes its processes own, every 0.2 s."""

    def __init__(self, root_pid: int):
        super().__init__(daemon=True)
        import docker

        self.root_pid, self.client, self.stop_event = root_pid, docker.from_env(), threading.Event()
        self.peak_rss = self.peak_containers = 0
        self.pids: set[int] = set()

    def owned(self) -> list[Any]:
        """Sandboxes whose creating process is (or was) in the batch's tree."""
        try:
            listed = self.client.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True)
        except Exception:
            return []
        return [c for c in listed if int((c.labels or {}).get(LABEL_PID, "0")) in self.pids]

    def run(self) -> None:
        while not self.stop_event.wait(0.2):
            tree = process_tree(self.root_pid)
            self.pids |= set(tree)
            self.peak_rss = max(self.peak_rss, sum(tree.values()))
            self.peak_containers = max(self.peak_containers, len([c for c in self.owned() if c.status == "running"]))


def batch(paths: list[Path], flags: list[str], ws: Path) -> dict[str, Any]:
    """One `run.py run <paths> <flags> --json`, sampled; what came back."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(RUN_PY), "run", *map(str, paths), *flags, "--json",
                             "--workspace", str(ws)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    sampler.stop_event.set()
    sampler.join()
    rows = [r for r in (json.loads(line) for line in out.splitlines() if line.startswith("{")) if "batch" not in r]
    return {"flags": " ".join(flags), "exit_code": proc.returncode, "wall_s": round(wall, 2),
            "runs_per_min": round(len(paths) / wall * 60, 1), "succeeded": sum(r["status"] == "success" for r in rows),
            "run_folders": len({p.parent for p in ws.glob("*/*/transcript.json")}),
            "peak_sandboxes": sampler.peak_containers, "peak_tree_rss_mb": round(sampler.peak_rss / 2**20),
            "leftover_containers": len(sampler.owned()), "retried": sum((r.get("ray_attempt") or 1) > 1 for r in rows),
            "stderr_tail": err.strip().splitlines()[-1:]}


def one_block(folder: Path, image: str) -> Path:
    """A scripted scenario of one `print(1)` block."""
    path = folder / "one.yaml"
    path.write_text(yaml.safe_dump({"name": "one", "task": "Print 1.", "sandbox": {"image": image},
                                    "model": {"provider": "scripted", "replies": ["```python\nprint(1)\n```"]},
                                    "strategy": {"attempts": 1}}, sort_keys=False))
    return path


def overhead(path: Path, rounds: int, ws: Path) -> dict[str, Any]:
    """Per-task costs on one warm local Ray instance, against one `run.py run --json` process per scenario."""
    import ray

    from agents.cli.scaleout.ray_batch import collect, connect, submit
    from agents.scenario.spec import load_scenario

    scenario = load_scenario(path)
    result: dict[str, Any] = {}
    started = time.perf_counter()
    connect(ray, "local", 1)
    result["ray_start_s"] = round(time.perf_counter() - started, 2)
    try:
        noop = ray.remote(lambda: None).options(num_cpus=0)
        ray.get([noop.remote() for _ in range(3)])  # warm a worker
        trips = []
        for _ in range(rounds * 5):
            t0 = time.perf_counter()
            ray.get(noop.remote())
            trips.append(time.perf_counter() - t0)
        result["noop_task"] = ms(trips)
        extra, walls = [], []
        for i in range(rounds + 1):
            t0 = time.perf_counter()
            row = collect(ray, submit(ray, i, scenario, {"sandbox": 1.0}, {}), ws / "ray")
            wall = time.perf_counter() - t0
            assert row["status"] == "success", row
            if i:  # round 0 warms the worker (imports, first container)
                walls.append(wall)
                extra.append(wall - row["seconds"])
        result["scenario_via_ray"] = {**ms(walls), "overhead": ms(extra)}
    finally:
        t0 = time.perf_counter()
        ray.shutdown()
        result["ray_stop_s"] = round(time.perf_counter() - t0, 2)
    extra, walls = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, str(RUN_PY), "run", str(path), "--json", "--workspace",
                               str(ws / "proc")], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        walls.append(wall)
        extra.append(wall - row["seconds"])
    result["scenario_via_process"] = {**ms(walls), "overhead": ms(extra)}
    return result


def main(argv: list[str] | None = None) -> int:
    """Throughput table, overhead table, optional JSON."""
    from rich.table import Table

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="scenarios in the batch")
    ap.add_argument("--jobs", type=int, default=2, help="--jobs value to compare with --ray local")
    ap.add_argument("--rounds", type=int, default=10, help="sequential scenarios for the per-task overhead")
    args, console, facts = parse_and_describe(ap, argv)
    with tempfile.TemporaryDirectory(prefix="codeduet-ray-bench-") as tmp:
        paths = write_scenarios(Path(tmp) / "scenarios", args.n, args.image)
        runs = []
        for flags in (["--jobs", str(args.jobs)], ["--ray", "local"]):
            console.print(f"running {args.n} scenarios with {' '.join(flags)} …")
            runs.append(batch(paths, flags, Path(tmp) / f"ws{len(runs)}"))
        console.print(f"per-task overhead, {args.rounds} rounds …")
        costs = overhead(one_block(Path(tmp), args.image), args.rounds, Path(tmp) / "ws-overhead")
    table = Table(title=f"batch of {args.n} scripted scenarios (2 executions each)")
    cols = ("flags", "wall_s", "runs_per_min", "succeeded", "run_folders", "peak_sandboxes", "peak_tree_rss_mb",
            "leftover_containers", "retried", "exit_code")
    for col in cols:
        table.add_column(col, justify="right")
    for r in runs:
        table.add_row(*(str(r.get(c)) for c in cols))
    console.print(table)
    console.print_json(json.dumps(costs))
    if args.out:
        args.out.write_text(json.dumps({"machine": facts, "n": args.n, "batches": runs, "overhead": costs}, indent=2))
    ok = all(r["exit_code"] == 0 and r["run_folders"] == args.n and not r["leftover_containers"] for r in runs)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
