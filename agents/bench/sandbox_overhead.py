"""`bench sandbox`: per-block latency through our executor vs a bare docker exec vs docker run --rm vs a subprocess.
Our executor's number includes putting the block into the container and copying back what it wrote.

Methods are interleaved round-robin within each iteration, so drift on a shared machine hits all of them alike.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.table import Table

from agents.bench.common import git_commit, machine, ms
from agents.loop.errors import CodeduetError
from agents.sandbox.config import SandboxConfig
from agents.sandbox.docker_executor import LABEL, LABEL_PID, DockerExecutor, hardening

BLOCKS = {"print(1)": "print(1)\n", "import numpy": "import numpy\nprint(numpy.__version__)\n",
          "write 1 KiB": "open('out.txt', 'w').write('x' * 1024)\nprint(1)\n"}
"""`write 1 KiB` changes the workspace every time, so our executor copies a file back after it."""
METHODS = ("executor", "docker_exec", "docker_run", "subprocess")
LABELS = {"executor": "1. our executor (DockerExecutor.execute)",
          "docker_exec": "2. bare docker exec, same container (API)",
          "docker_run": "3. docker run --rm per block (fresh container)",
          "subprocess": "4. local subprocess (no sandbox)"}
WARMUP = 2


class Bench:
    """One container for methods 1-2 (its workspace put in at start), fresh ones for 3 (`python3 -c`), a temp folder
    for 4."""

    def __init__(self, cfg: SandboxConfig, workspace: Path):
        self.cfg = cfg
        self.workspace = workspace
        self.executor = DockerExecutor(cfg, workspace / "container", f"bench-{uuid.uuid4().hex[:6]}")
        self.local = workspace / "local"
        self.local.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        """Start the long-lived container and write the fixed files methods 2-4 run."""
        for name, code in BLOCKS.items():
            for folder in (self.executor.workspace, self.local):
                folder.mkdir(parents=True, exist_ok=True)
                (folder / _file(name)).write_text(code, encoding="utf-8")
        self.executor.start()

    def stop(self) -> None:
        """Remove the container."""
        self.executor.stop()

    def run(self, method: str, name: str) -> float:
        """Seconds for one block through one method; raises if the block did not print what it should."""
        started = time.perf_counter()
        if method == "executor":
            r = self.executor.execute(BLOCKS[name], "python")
            ok, out = r.exit_code == 0, r.output
        elif method == "docker_exec":
            api = self.executor.client.api
            # cwd /tmp: what this method writes must not land in /workspace, where our executor would find it
            # changed and copy it back during its own next block
            exec_id = api.exec_create(self.executor.container.id, ["python3", "-u", f"/workspace/{_file(name)}"],
                                      workdir="/tmp")["Id"]
            out = api.exec_start(exec_id).decode()
            ok = api.exec_inspect(exec_id)["ExitCode"] == 0
        elif method == "docker_run":
            container = self.executor.client.containers.run(
                self.cfg.image, ["python3", "-u", "-c", BLOCKS[name]], detach=True, working_dir="/workspace",
                labels={LABEL: "bench", LABEL_PID: str(os.getpid())}, **hardening(self.cfg))
            try:
                ok = container.wait()["StatusCode"] == 0
                out = container.logs().decode()
            finally:
                container.remove(force=True, v=True)
        else:
            p = subprocess.run([sys.executable, "-u", _file(name)], cwd=self.local, capture_output=True, text=True,
                               timeout=self.cfg.timeout)
            ok, out = p.returncode == 0, p.stdout
        seconds = time.perf_counter() - started
        if not ok or not out.strip():
            raise CodeduetError(f"bench sandbox: {method} failed on {name!r}: {out.strip()[-200:]}")
        return seconds


def _file(name: str) -> str:
    return {"print(1)": "bench_print.py", "import numpy": "bench_numpy.py"}.get(name, "bench_write.py")


def measure(bench: Bench, n: int, methods: tuple[str, ...] = METHODS,
            on_step: Callable[[], None] | None = None) -> dict[str, dict[str, list[float]]]:
    """n timed rounds (after WARMUP untimed ones) of every (block, method), interleaved."""
    times: dict[str, dict[str, list[float]]] = {b: {m: [] for m in methods} for b in BLOCKS}
    for i in range(WARMUP + n):
        for block in BLOCKS:
            for method in (methods if i % 2 == 0 else methods[::-1]):
                seconds = bench.run(method, block)
                if i >= WARMUP:
                    times[block][method].append(seconds)
        if on_step and i >= WARMUP:
            on_step()
    return times


def summarize(times: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    """Median and p90 (ms) per block and method, and the two target ratios on medians."""
    out: dict[str, Any] = {}
    for block, per in times.items():
        stats = {m: {**ms(v), "n": len(v)} for m, v in per.items() if v}
        ex, de, dr = (stats.get(k, {}).get("median_ms") for k in ("executor", "docker_exec", "docker_run"))
        ratios = {}
        if ex and de:
            ratios["executor_over_docker_exec"] = round(ex / de, 3)
            ratios["target_executor_over_docker_exec_le_1.0"] = ex / de <= 1.0
        if ex and dr:
            ratios["docker_run_over_executor"] = round(dr / ex, 2)
            ratios["target_docker_run_over_executor_ge_5"] = dr / ex >= 5
        out[block] = {"methods": stats, "ratios": ratios}
    return out


def table(summary: dict[str, Any]) -> Table:
    """Rich table: one row per method, median/p90 per block, then the ratios."""
    t = Table(title="Per-block latency (ms): median / p90")
    t.add_column("method")
    for block in summary:
        t.add_column(block, justify="right")
    for m in METHODS:
        cells = []
        for block in summary:
            s = summary[block]["methods"].get(m)
            cells.append(f"{s['median_ms']:.0f} / {s['p90_ms']:.0f}" if s else "-")
        t.add_row(LABELS[m], *cells)
    t.add_section()
    for key, label, target in (("executor_over_docker_exec", "ratio 1/2 (target ≤ 1.0)", "le"),
                               ("docker_run_over_executor", "ratio 3/1 (target ≥ 5)", "ge")):
        cells = []
        for block in summary:
            r = summary[block]["ratios"]
            if key in r:
                met = r[f"target_{key}_{'le_1.0' if target == 'le' else 'ge_5'}"]
                cells.append(f"{r[key]:.2f} {'[green]met[/]' if met else '[red]missed[/]'}")
            else:
                cells.append("-")
        t.add_row(label, *cells)
    return t


def main(console: Console, *, n: int, out: Path | None) -> int:
    """CLI entry: measure, print the table, write sandbox_overhead.json; 0 when every method ran."""
    out = Path(out) if out else Path.cwd() / "bench-out" / f"sandbox-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    cfg = SandboxConfig()
    with tempfile.TemporaryDirectory(prefix="codeduet-bench-") as tmp:
        bench = Bench(cfg, Path(tmp))
        try:
            bench.start()
            console.print(f"sandbox overhead: {n} rounds (+{WARMUP} warm-up) of {len(BLOCKS)} blocks × "
                          f"{len(METHODS)} methods, image {cfg.image}")
            with console.status("measuring...") as status:
                done = [0]

                def step() -> None:
                    done[0] += 1
                    status.update(f"measuring... round {done[0]}/{n}")

                times = measure(bench, n, on_step=step)
        finally:
            bench.stop()
    summary = summarize(times)
    result = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
              "commit": git_commit(), "image": cfg.image, "n": n, "warmup": WARMUP,
              "local_python": sys.executable, "results": summary, "raw_seconds": times}
    (out / "sandbox_overhead.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    console.print(table(summary))
    console.print(f"written: {out / 'sandbox_overhead.json'}", soft_wrap=True)
    return 0
