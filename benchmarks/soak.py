"""Soak: a thousand scripted runs back to back (`run --jobs 4`, then a `--ray local` leg) while `codeduet ui` serves
the runs list to ten live viewers; events lost, containers and reapers left, and memory and file descriptors.

    python -m benchmarks.soak [--runs 1000] [--batch 100] [--jobs 4] [--ray-runs 150] [--viewers 10] [--out FILE]

Each batch is one `run.py run <batch> --jobs J --json` process (a new one per batch), sampled every 0.5 s for its
resident memory and open file descriptors, and at its first, middle and last finished run; in the Ray leg, the Ray
workers too (they run task after task in one process). The UI server is one process for the whole soak, sampled
every second. Viewers are threads that poll the runs list, open a running run's page and follow its event stream
to the end, then pick the next. Afterwards every run folder is checked (benchmarks/soak_check.py). CPU-heavy:
it notes the load average, since other work on the machine slows it down.
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
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from agents.bench.common import git_commit, machine, process_tree
from agents.cli.scaleout.node_task import SCRATCH_ENV
from agents.loop.defaults import SANDBOX_IMAGE
from agents.record.paths import PROJECT_ROOT
from agents.sandbox.reaper import WATCHDOG
from benchmarks.soak_check import check_runs, own_containers, proc_stats, reaper_processes
from benchmarks.soak_ui import UISampler, Viewer
from benchmarks.ui_live import Server

FIX = "values = [n * n for n in range({k})]\nprint('total', sum(values))"
BROKEN = "values = [n * n for n in range({k})]\nprint('total', sum(values) / len([]))"
MB = 2**20


def write_batch(folder: Path, start: int, n: int, image: str) -> list[Path]:
    """n scripted scenarios (20 scenario names shared by all batches); every third sends a failing block first,
    then the fix; each is checked by its stdout."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(start, start + n):
        k = 100 + i
        replies = [f"```python\n{FIX.format(k=k)}\n```"]
        if i % 3 == 0:
            replies.insert(0, f"```python\n{BROKEN.format(k=k)}\n```")
        data = {"name": f"soak{i % 20:02d}", "task": f"Print the sum of the squares below {k}.",
                "model": {"provider": "scripted", "replies": replies}, "sandbox": {"image": image},
                "checks": [{"stdout_contains": f"total {sum(n * n for n in range(k))}"}]}
        paths.append(folder / f"soak{i:05d}.yaml")
        paths[-1].write_text(yaml.safe_dump(data, sort_keys=False))
    return paths


class BatchSampler(threading.Thread):
    """Peaks of a batch process's own rss and fds, of its whole tree's rss, processes and reapers (which shows the
    reaper count can see them); in a Ray leg, each Ray worker's fds and rss when first and last seen."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.stop_event = pid, threading.Event()
        self.peak = {"rss": 0, "fds": 0, "tree_rss": 0, "processes": 0, "reapers": 0}
        self.workers: dict[int, dict[str, Any]] = {}

    def run(self) -> None:
        while not self.stop_event.wait(0.5):
            own = proc_stats(self.pid)
            if own is None:
                return
            tree = process_tree(self.pid)
            cmdlines = {pid: cmdline(pid) for pid in tree}
            reapers = sum(1 for argv in cmdlines.values() if argv[1:3] == [b"-c", WATCHDOG.encode()])
            for key, value in (("rss", own[0]), ("fds", own[1]), ("tree_rss", sum(tree.values())),
                               ("processes", len(tree)), ("reapers", reapers)):
                self.peak[key] = max(self.peak[key], value)
            for pid in (pid for pid, argv in cmdlines.items() if argv[0].startswith(b"ray::")):
                stats = proc_stats(pid)
                if stats:
                    seen = self.workers.setdefault(pid, {"first_rss": stats[0], "first_fds": stats[1], "max_fds": 0})
                    seen.update(last_rss=stats[0], last_fds=stats[1], max_fds=max(seen["max_fds"], stats[1]))


def cmdline(pid: int) -> list[bytes]:
    """A process's argv ([b""] once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return [b""]


def run_batch(number: int, paths: list[Path], flags: list[str], ws: Path, env: dict[str, str],
              ui: UISampler) -> dict[str, Any]:
    """One `run.py run <paths> <flags> --json` process, sampled; its rows, peaks and what it left behind."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(PROJECT_ROOT / "run.py"), "run", *map(str, paths), *flags, "--json",
                             "--workspace", str(ws)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    sampler = BatchSampler(proc.pid)
    sampler.start()
    err: list[str] = []
    drain = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    drain.start()
    rows, marks = [], {}
    marks_at = {1: "first", max(1, len(paths) // 2): "middle", len(paths): "last"}
    for line in proc.stdout:  # type: ignore[union-attr]
        if line.startswith("{") and not line.startswith('{"batch"'):  # the batch's own last line: not a run
            rows.append(json.loads(line))
            ui.runs_done += 1
            if len(rows) in marks_at:
                rss, fds = proc_stats(proc.pid) or (0, 0)
                marks[marks_at[len(rows)]] = {"rss_mb": round(rss / MB, 1), "fds": fds}
                sampler.peak.update(rss=max(rss, sampler.peak["rss"]), fds=max(fds, sampler.peak["fds"]))
    proc.wait()
    drain.join(10)
    wall = time.perf_counter() - started
    sampler.stop_event.set()
    sampler.join()
    tasks = Counter(r.get("pid") for r in rows if r.get("pid"))
    workers = [{"pid": pid, "tasks": tasks.get(pid, 0), **w} for pid, w in sorted(sampler.workers.items())]
    return {"batch": number, "flags": " ".join(flags), "runs": len(paths), "exit_code": proc.returncode,
            "wall_s": round(wall, 1), "runs_per_min": round(len(paths) / wall * 60, 1),
            "succeeded": sum(r.get("status") == "success" for r in rows), "rows": len(rows),
            "peak_rss_mb": round(sampler.peak["rss"] / MB, 1), "peak_fds": sampler.peak["fds"],
            "at_runs": marks, "peak_tree_rss_mb": round(sampler.peak["tree_rss"] / MB),
            "peak_processes": sampler.peak["processes"], "peak_reapers": sampler.peak["reapers"], "ray_workers": [
                {k: round(v / MB, 1) if k.endswith("rss") else v for k, v in w.items()} for w in workers if w["tasks"]],
            "load_avg_1m": round(os.getloadavg()[0], 2), "stderr_tail": [ln.rstrip() for ln in err[-2:]]}


def leftovers(client: Any, root: Path, ws: Path) -> dict[str, Any]:
    """Sandbox containers (by label, workspace under root) and reaper processes of the runs under ws, still there."""
    run_ids = {p.name for p in ws.glob("*/*") if p.is_dir()}
    return {"containers": own_containers(client, root), "reapers": reaper_processes(run_ids)}


def show(console: Any, report: dict[str, Any]) -> None:
    """The batches, the UI server's marks and the verdict, as rich tables."""
    from rich.table import Table

    table = Table(title=f"soak: {report['runs']} runs in batches, then {report['ray_runs']} on Ray")
    cols = ("batch", "flags", "runs", "wall_s", "runs_per_min", "succeeded", "exit", "CLI rss MB first/mid/last run",
            "CLI fds first/mid/last run", "peak rss MB", "peak fds", "tree rss MB", "containers left",
            "reapers during/left", "load")
    for col in cols:
        table.add_column(col, justify="right", no_wrap=col == "flags")
    for b in report["batches"]:
        at = [b["at_runs"].get(k, {}) for k in ("first", "middle", "last")]
        table.add_row(str(b["batch"]), b["flags"], str(b["runs"]), str(b["wall_s"]), str(b["runs_per_min"]),
                      str(b["succeeded"]), str(b["exit_code"]), "/".join(str(a.get("rss_mb")) for a in at),
                      "/".join(str(a.get("fds")) for a in at), str(b["peak_rss_mb"]), str(b["peak_fds"]),
                      str(b["peak_tree_rss_mb"]), str(len(b["left"]["containers"])),
                      f"{b['peak_reapers']}/{len(b['left']['reapers'])}", str(b["load_avg_1m"]))
    console.print(table)
    ui = Table(title="codeduet ui server (one process throughout)")
    for col in ("when", "runs done", "rss MB", "fds"):
        ui.add_column(col, justify="right")
    for when, mark in report["ui"]["marks"].items():
        ui.add_row(when, str(mark["runs_done"]), str(mark["rss_mb"]), str(mark["fds"]))
    ui.add_row("peak", "", str(report["ui"]["peak_rss_mb"]), str(report["ui"]["peak_fds"]))
    console.print(ui)
    workers = [w for b in report["batches"] for w in b["ray_workers"]]
    if workers:
        console.print("ray workers (tasks: fds first→last, rss MB first→last): " + ", ".join(
            f"{w['tasks']}: {w['first_fds']}→{w['last_fds']}, {w['first_rss']}→{w['last_rss']}" for w in workers))
    c = report["check"]
    console.print(f"run folders {c['run_folders']} (expected {report['runs'] + report['ray_runs']}), events "
                  f"{c['events']}, messages {c['messages']}, runs with problems {c['runs_with_problems']}, statuses "
                  f"{c['statuses']}; viewers: {report['viewers']['totals']}; left at the end: "
                  f"{len(report['left']['containers'])} containers, {len(report['left']['reapers'])} reapers, "
                  f"{report['left']['ray_scratch']} Ray scratch folders; wall {report['wall_s']} s")


def soak(args: argparse.Namespace, tmp: Path, console: Any) -> dict[str, Any]:
    """Start the UI and the viewers, run the batches and the Ray leg, stop everything; the report."""
    import docker

    client, ws, scratch = docker.from_env(), tmp / "ws", tmp / "ray-scratch"
    ws.mkdir()
    scratch.mkdir()
    env = {**os.environ, "COLUMNS": "200", SCRATCH_ENV: str(scratch)}
    server = Server(ws)
    ui = UISampler(server.proc.pid)
    stop = threading.Event()
    viewers = [Viewer(i, server.url, ws, stop) for i in range(args.viewers)]
    started = time.perf_counter()
    try:
        time.sleep(2.0)
        marks = {"start": ui.sample()}
        ui.start()
        for v in viewers:
            v.start()
        sizes = [min(args.batch, args.runs - s) for s in range(0, args.runs, args.batch)]
        legs = [(s, n, ["--jobs", str(args.jobs)]) for s, n in zip(range(0, args.runs, args.batch), sizes)]
        if args.ray_runs:
            legs.append((args.runs, args.ray_runs, ["--ray", "local", "--jobs", str(args.jobs)]))
        batches = []
        for number, (first, n, flags) in enumerate(legs, 1):
            paths = write_batch(tmp / "scenarios" / f"b{number:02d}", first, n, args.image)
            console.print(f"batch {number}/{len(legs)}: {n} runs, {' '.join(flags)} …")
            batches.append(run_batch(number, paths, flags, ws, env, ui))
            batches[-1]["left"] = leftovers(client, tmp, ws)
            b = batches[-1]
            console.print(f"  {b['succeeded']}/{n} succeeded in {b['wall_s']} s; CLI peak {b['peak_rss_mb']} MB, "
                          f"{b['peak_fds']} fds; UI {ui.sample()}; load {b['load_avg_1m']}")
            if number == max(1, len(sizes) // 2):
                marks["middle"] = ui.sample()
            if number == len(sizes):
                marks["end of --jobs"] = ui.sample()
        marks["end"] = ui.sample()
        stop.set()
        for v in viewers:
            v.join(40)
        time.sleep(2.0)
        marks["viewers gone"] = ui.sample()
        ui.stop_event.set()
    finally:
        stop.set()
        server.stop()
    wall = time.perf_counter() - started
    time.sleep(2.0)  # a reaper told to exit needs a moment
    left = {**leftovers(client, tmp, ws), "ray_scratch": len(list(scratch.iterdir()))}
    totals = {k: sum(v.stats[k] for v in viewers) for k in viewers[0].stats} if viewers else {}
    return {"runs": args.runs, "ray_runs": args.ray_runs, "jobs": args.jobs, "viewers": {
                "count": args.viewers, "totals": totals, "per_viewer": [v.stats for v in viewers],
                "last_errors": [v.last_error for v in viewers if v.last_error]},
            "wall_s": round(wall, 1), "batches": batches, "check": check_runs(ws), "left": left,
            "ui": {"marks": marks, "peak_rss_mb": round(max(s[2] for s in ui.samples) / MB, 1),
                   "peak_fds": max(s[3] for s in ui.samples), "samples": ui.samples}}


def main(argv: list[str] | None = None) -> int:
    """Run the soak, print the tables, optionally write JSON; 0 when nothing was lost or left behind."""
    from rich.console import Console

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000, help="runs with --jobs, in batches")
    ap.add_argument("--batch", type=int, default=100, help="runs per batch (one CLI process each)")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--ray-runs", type=int, default=150, help="runs of the --ray local leg (0: none)")
    ap.add_argument("--viewers", type=int, default=10)
    ap.add_argument("--image", default=SANDBOX_IMAGE)
    ap.add_argument("--keep", type=Path, help="keep the run folders in this (new) folder")
    ap.add_argument("--out", type=Path, help="also write the results as JSON")
    args = ap.parse_args(argv)
    console = Console(highlight=False, width=200)
    facts = machine(docker=True)
    console.print("machine: " + ", ".join(f"{k}={v}" for k, v in facts.items()))
    if args.keep:
        args.keep.mkdir(parents=True)
        report = soak(args, args.keep.resolve(), console)
    else:
        with tempfile.TemporaryDirectory(prefix="codeduet-soak-") as tmp:
            report = soak(args, Path(tmp).resolve(), console)
    report = {"machine": facts, "commit": git_commit(), "load_avg_1m_end": round(os.getloadavg()[0], 2), **report}
    show(console, report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))
    c, left = report["check"], report["left"]
    expected = args.runs + args.ray_runs
    ok = (c["run_folders"] == expected and not c["runs_with_problems"] and c["statuses"].get("success") == expected
          and not left["containers"] and not left["reapers"] and not left["ray_scratch"]
          and not report["viewers"]["totals"].get("short_streams"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
