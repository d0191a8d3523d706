"""Batch load: N scripted scenarios with `run --jobs 1` vs `--jobs J`; wall time and peak memory, as a table.

    python -m benchmarks.batch_load [--n 20] [--jobs 1,4] [--out result.json]

Memory is sampled every 0.1 s: the resident memory of the batch process and every process under it (the
per-scenario `run.py` workers), and the cgroup memory of the batch's sandbox containers. It is CPU-heavy:
on a shared machine, run it under `flock /tmp/codeduet-cpu.lock`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from agents.bench.common import machine, process_tree
from agents.loop.defaults import SANDBOX_IMAGE
from agents.record.paths import PROJECT_ROOT
from agents.sandbox.docker_executor import LABEL, LABEL_WORKSPACE

FIX = "primes = [n for n in range(2, 2000) if all(n % d for d in range(2, int(n ** 0.5) + 1))]\nprint(sum(primes))"
BROKEN = "primes = [n for n in range(2, 2000) if all(n % d for d in range(2, n))]\nprint(sum(primes) / 0)"


def write_scenarios(folder: Path, n: int, image: str = SANDBOX_IMAGE) -> list[Path]:
    """n scripted scenarios, each a failing block, then the fix, checked by stdout (two executions each)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        data = {"name": f"load{i:02d}", "task": "Print the sum of the primes below 2000.",
                "model": {"provider": "scripted", "replies": [f"```python\n{BROKEN}\n```", f"```python\n{FIX}\n```"]},
                "sandbox": {"image": image}, "checks": [{"stdout_contains": "277050"}]}
        path = folder / f"load{i:02d}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        paths.append(path)
    return paths


def _tree_rss(root: int) -> int:
    """Resident bytes of `root` and all its descendants."""
    return sum(process_tree(root).values())


def _cgroup_memory(container_id: str) -> int:
    """Current memory of a container from its cgroup (v1 or v2), 0 when gone."""
    for path in (f"/sys/fs/cgroup/memory/docker/{container_id}/memory.usage_in_bytes",
                 f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/memory.current",
                 f"/sys/fs/cgroup/docker/{container_id}/memory.current"):
        try:
            return int(Path(path).read_text())
        except (OSError, ValueError):
            continue
    return 0


class Sampler(threading.Thread):
    """Peaks of host RSS, sandbox memory, their sum and concurrent containers, sampled until stopped."""

    def __init__(self, root_pid: int, workspaces: Path):
        super().__init__(daemon=True)
        import docker

        self.root_pid, self.prefix, self.client = root_pid, str(workspaces.resolve()), docker.from_env()
        self.stop_event = threading.Event()
        self.peak = {"host_rss": 0, "sandboxes": 0, "total": 0, "containers": 0}
        self.ids: list[str] = []

    def _refresh_ids(self) -> None:
        try:
            listed = self.client.containers.list(sparse=True, filters={"label": LABEL})
        except Exception:
            return
        self.ids = [c.id for c in listed  # the batch's own containers, by the host folder each copies back to
                    if str((c.attrs.get("Labels") or {}).get(LABEL_WORKSPACE, "")).startswith(self.prefix)]

    def run(self) -> None:
        tick = 0
        while not self.stop_event.wait(0.1):
            if tick % 5 == 0:
                self._refresh_ids()
            tick += 1
            host, boxes = _tree_rss(self.root_pid), sum(_cgroup_memory(i) for i in self.ids)
            for key, value in (("host_rss", host), ("sandboxes", boxes), ("total", host + boxes),
                               ("containers", len(self.ids))):
                self.peak[key] = max(self.peak[key], value)


def run_batch(paths: list[Path], jobs: int, workspaces: Path) -> dict[str, Any]:
    """One `run.py run <all> --jobs J` with sampling; what it left behind."""
    cmd = [sys.executable, str(PROJECT_ROOT / "run.py"), "run", *map(str, paths), "--jobs", str(jobs),
           "--workspace", str(workspaces)]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    sampler = Sampler(proc.pid, workspaces)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    sampler.stop_event.set()
    sampler.join()
    sampler._refresh_ids()
    transcripts = list(workspaces.glob("*/*/transcript.json"))
    statuses = [json.loads(t.read_text()).get("status") for t in transcripts]
    return {"jobs": jobs, "exit_code": proc.returncode, "wall_s": round(wall, 2),
            "runs_per_min": round(len(paths) / wall * 60, 1),
            "peak_host_rss_mb": round(sampler.peak["host_rss"] / 2**20), "peak_sandboxes_mb":
            round(sampler.peak["sandboxes"] / 2**20), "peak_total_mb": round(sampler.peak["total"] / 2**20),
            "peak_containers": sampler.peak["containers"],
            "run_folders": len({p.parent for p in workspaces.glob("*/*/events.jsonl")}),
            "transcripts": len(transcripts), "succeeded": statuses.count("success"),
            "leftover_containers": len(sampler.ids), "stderr_tail": err.strip().splitlines()[-1:] if err else []}


def parse_and_describe(ap: argparse.ArgumentParser, argv: list[str] | None) -> tuple[argparse.Namespace, Any, dict]:
    """Add --image and --out, parse; a wide console that has printed the machine line; the machine facts."""
    from rich.console import Console

    ap.add_argument("--image", default=SANDBOX_IMAGE)
    ap.add_argument("--out", type=Path, help="also write the results as JSON")
    args = ap.parse_args(argv)
    console = Console(highlight=False, width=200)
    facts = machine(docker=True)
    console.print("machine: " + ", ".join(f"{k}={v}" for k, v in facts.items()))
    return args, console, facts


def main(argv: list[str] | None = None) -> int:
    """Run the batch at each --jobs value, print the table, optionally write JSON."""
    from rich.table import Table

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="scenarios in the batch")
    ap.add_argument("--jobs", default="1,4", help="comma-separated --jobs values to compare")
    args, console, facts = parse_and_describe(ap, argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="codeduet-batch-load-") as tmp:
        paths = write_scenarios(Path(tmp) / "scenarios", args.n, args.image)
        for jobs in (int(j) for j in args.jobs.split(",")):
            console.print(f"running {args.n} scenarios with --jobs {jobs} …")
            results.append(run_batch(paths, jobs, Path(tmp) / f"ws-jobs{jobs}"))
    base = results[0]["wall_s"]
    table = Table(title=f"batch of {args.n} scripted scenarios (2 executions each)")
    cols = ("jobs", "wall_s", "speedup", "runs_per_min", "peak_host_rss_mb", "peak_sandboxes_mb", "peak_total_mb",
            "peak_containers", "run_folders", "transcripts", "succeeded", "leftover_containers", "exit_code")
    for col in cols:
        table.add_column(col, justify="right")
    for r in results:
        r["speedup"] = round(base / r["wall_s"], 2) if r["wall_s"] else None
        table.add_row(*(str(r.get(c)) for c in cols))
    console.print(table)
    if args.out:
        args.out.write_text(json.dumps({"machine": facts, "n": args.n, "results": results}, indent=2))
    ok = all(r["exit_code"] == 0 and r["transcripts"] == args.n and not r["leftover_containers"] for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
