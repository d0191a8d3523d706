"""`python -m benchmarks.ag2_executors`: our SandboxCodeExecutor against AG2's DockerCommandLineCodeExecutor on
the same locally built image: per-block latency, limits enforced, containers left after a kill -9.

Both executors are used as an AG2 user would (AG2's: its defaults plus labels, a SIGKILL stop signal and a
writable work_dir, none of which changes what a block may do).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agents.bench.common import git_commit, machine, ms
from agents.record.paths import PROJECT_ROOT
from agents.sandbox.config import SandboxConfig

KINDS = ("codeduet", "ag2")
NAMES = {"codeduet": "codeduet SandboxCodeExecutor", "ag2": "AG2 DockerCommandLineCodeExecutor"}
AG2_LABEL = "org.codeduet.ag2-executor"
"""Label put on AG2's containers so the bench and the tests can find (and count) them."""
IMAGE = SandboxConfig().image
WARMUP = 2
GRACE_S = 15.0
"""How long after the kill -9 a container may take to disappear before it counts as left behind."""

PROBES: dict[str, tuple[str, Callable[[str], bool]]] = {
    # name: (block printing one line, whether that line shows the limit enforced)
    "memory (768 MiB allocation)": (
        "try:\n    b = b'x' * (768 * 2**20)\n    print('allocated')\nexcept MemoryError:\n    print('MemoryError')",
        lambda out: "allocated" not in out),
    "pids (300 threads)": (
        "import threading\nev, n = threading.Event(), 0\ntry:\n    for _ in range(300):\n"
        "        threading.Thread(target=ev.wait).start(); n += 1\nexcept RuntimeError:\n    pass\nev.set()\n"
        "print('threads', n)",
        lambda out: "threads 300" not in out),
    "network (interfaces)": (
        "import socket\nprint(sorted(name for _, name in socket.if_nameindex()))",
        lambda out: out.strip().endswith("['lo']")),
    "read-only root": (
        "print([line.split()[3].split(',')[0] for line in open('/proc/self/mounts') if line.split()[1] == '/'])",
        lambda out: "['ro']" in out),
    "non-root user": ("import os\nprint('uid', os.getuid())", lambda out: "uid 0" not in out and "uid" in out),
    "capabilities dropped": (
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('CapBnd')][0])",
        lambda out: out.strip().endswith("0000000000000000")),
    "no-new-privileges": (
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('NoNewPrivs')][0])",
        lambda out: out.strip().endswith("1")),
}


def make(kind: str, work_dir: Path | None, *, image: str = IMAGE, timeout: int = 10, tag: str = "bench") -> Any:
    """An executor of that kind on `image`; AG2's carries the label AG2_LABEL=tag."""
    if kind == "codeduet":
        from agents.sandbox.ag2_executor import SandboxCodeExecutor

        return SandboxCodeExecutor(image=image, timeout=timeout, work_dir=work_dir)
    from autogen.coding import DockerCommandLineCodeExecutor

    work_dir = Path(work_dir or tempfile.mkdtemp(prefix="ag2-executor-"))
    work_dir.mkdir(exist_ok=True)
    os.chmod(work_dir, 0o777)  # the image's user (uid 1000) may write there, as it may in ours
    # SIGKILL as stop signal: /bin/sh as PID 1 ignores SIGTERM, so stop() would otherwise wait 10 s per container
    return DockerCommandLineCodeExecutor(image=image, timeout=timeout, work_dir=work_dir,
                                         container_create_kwargs={"labels": {AG2_LABEL: tag},
                                                                  "stop_signal": "SIGKILL"})


def run_block(executor: Any, code: str) -> Any:
    """One Python block through AG2's interface."""
    from autogen.coding import CodeBlock

    return executor.execute_code_blocks([CodeBlock(code=code, language="python")])


FILENAME_CASES: dict[str, tuple[str, str]] = {
    # the `# filename:` convention: (language, block); AG2's rule is autogen/coding/utils.py
    "# filename: test.py": ("python", "# filename: test.py\nprint('ran')"),
    "# compute the sum (a comment)": ("python", "# compute the sum\nprint('ran')"),
    "# filename: sub/../inside.py": ("python", "# filename: sub/../inside.py\nprint('ran')"),
    "# filename: /tmp/abs.py": ("python", "# filename: /tmp/abs.py\nprint('ran')"),
    "// filename: data.json (json block)": ("json", '// filename: data.json\n{"a": 1}'),
}


def filename_cases(executor: Any) -> dict[str, str]:
    """What each `# filename:` case did: exit code, the file written (relative to the work dir), whether it ran."""
    from autogen.coding import CodeBlock

    out = {}
    for name, (language, code) in FILENAME_CASES.items():
        r = executor.execute_code_blocks([CodeBlock(code=code, language=language)])
        written = Path(r.code_file).relative_to(Path(executor.work_dir).resolve()).as_posix() \
            if r.code_file and Path(r.code_file).resolve().is_relative_to(Path(executor.work_dir).resolve()) else "-"
        out[name] = f"exit {r.exit_code}, file {written!r}{', ran' if 'ran' in r.output else ''}"
    return out


def probe_limits(executor: Any) -> dict[str, dict[str, Any]]:
    """Run every probe; {name: {"enforced": bool, "exit_code": int, "output": last line}}."""
    results = {}
    for name, (code, enforced) in PROBES.items():
        r = run_block(executor, code)
        results[name] = {"enforced": enforced(r.output), "exit_code": r.exit_code,
                         "output": (r.output.strip().splitlines() or [""])[-1][:120]}
    return results


def latencies(executors: dict[str, Any], n: int) -> dict[str, list[float]]:
    """Seconds per `print(1)` block, interleaved across executors after WARMUP untimed rounds."""
    times: dict[str, list[float]] = {kind: [] for kind in executors}
    for i in range(WARMUP + n):
        for kind in (list(executors) if i % 2 == 0 else list(executors)[::-1]):
            started = time.perf_counter()
            result = run_block(executors[kind], "print(1)")
            seconds = time.perf_counter() - started
            if result.exit_code != 0 or result.output.strip() != "1":
                raise RuntimeError(f"{kind}: print(1) gave exit {result.exit_code}: {result.output[-200:]}")
            if i >= WARMUP:
                times[kind].append(seconds)
    return times


HOLD = """
import sys, time
from pathlib import Path
from benchmarks.ag2_executors import make, run_block, AG2_LABEL
from agents.sandbox.docker_executor import LABEL
kind, image, tag, work_dir = sys.argv[1:5]
executor = make(kind, Path(work_dir) if work_dir else None, image=image, tag=tag)
run_block(executor, "print(1)")
print(f"{LABEL}={executor.run_id}" if kind == "codeduet" else f"{AG2_LABEL}={tag}", flush=True)
time.sleep(600)
"""


def crash_leftovers(kind: str, image: str = IMAGE, grace_s: float | None = None) -> int:
    """Start a Python process holding an executor, kill -9 it, and count its containers still there after
    up to grace_s (default GRACE_S) seconds; then remove them, so the bench leaves nothing."""
    import docker

    grace_s = GRACE_S if grace_s is None else grace_s

    # ours makes (and must clean) its own temporary work_dir; AG2's gets one this process removes
    ag2_dir = tempfile.mkdtemp(prefix="ag2-executor-") if kind == "ag2" else ""
    child = subprocess.Popen([sys.executable, "-c", HOLD, kind, image, f"crash-{uuid.uuid4().hex[:8]}", ag2_dir],
                             stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT,
                             env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    try:
        label = (child.stdout.readline() if child.stdout else "").strip()
    finally:
        child.kill()
        child.wait()
        if ag2_dir:
            shutil.rmtree(ag2_dir, ignore_errors=True)
    if "=" not in label:
        raise RuntimeError(f"{kind}: the process holding the executor did not start")
    client = docker.from_env()

    def left() -> list[Any]:
        return client.containers.list(all=True, filters={"label": label}, ignore_removed=True)

    deadline = time.monotonic() + grace_s
    while left() and time.monotonic() < deadline:
        time.sleep(0.25)
    remaining = left()
    for container in remaining:
        try:
            container.remove(force=True)
        except docker.errors.APIError:  # its watchdog got there first
            pass
    return len(remaining)


def summarize(times: dict[str, list[float]]) -> dict[str, dict[str, float | int | None]]:
    """Median and p90 in ms per executor."""
    return {kind: {**ms(v), "n": len(v)} for kind, v in times.items()}


def table(report: dict[str, Any]) -> Table:
    """One column per executor: latency, each limit, containers left after kill -9."""
    t = Table(title="AG2 executors on the same image")
    t.add_column("")
    for kind in KINDS:
        t.add_column(NAMES[kind])
    lat = report["latency"]
    t.add_row("print(1) per block, ms (median / p90)",
              *(f"{lat[k]['median_ms']:.0f} / {lat[k]['p90_ms']:.0f}" for k in KINDS))
    for name in PROBES:
        cells = []
        for k in KINDS:
            p = report["limits"][k][name]
            shown = p["output"] if p["exit_code"] == 0 else f"exit {p['exit_code']}: {p['output']}"
            cells.append(f"{'[green]yes[/]' if p['enforced'] else '[red]no[/]'} ({escape(shown)})")
        t.add_row(name, *cells)
    t.add_row("containers left after kill -9", *(str(report["crash_leftovers"][k]) for k in KINDS))
    for name in FILENAME_CASES:
        t.add_row(escape(name), *(escape(report.get("filenames", {}).get(k, {}).get(name, "")) for k in KINDS))
    return t


def main(console: Console, *, n: int, out: Path | None, image: str = IMAGE) -> dict[str, Any]:
    """Measure both executors, print the table, write ag2_executors.json; return the report."""
    out = Path(out) if out else PROJECT_ROOT / "bench-out" / f"ag2-executors-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()  # the machine may be shared: the latency column is only as quiet as it was
    with tempfile.TemporaryDirectory(prefix="codeduet-bench-ag2-") as tmp:
        executors: dict[str, Any] = {}
        try:
            for kind in KINDS:
                executors[kind] = make(kind, Path(tmp) / kind, image=image)
            with console.status(f"latency: {n} rounds (+{WARMUP} warm-up)..."):
                times = latencies(executors, n)
            with console.status("limits..."):
                limits = {kind: probe_limits(ex) for kind, ex in executors.items()}
            filenames = {kind: filename_cases(ex) for kind, ex in executors.items()}
        finally:
            for ex in executors.values():
                ex.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    with console.status("kill -9 of the process holding each executor..."):
        leftovers = {kind: crash_leftovers(kind, image) for kind in KINDS}
    report = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
              "commit": git_commit(), "image": image, "n": n, "warmup": WARMUP, "grace_s": GRACE_S,
              "load_average_1_5_15": {"before": load_before, "after": os.getloadavg()},
              "latency": summarize(times), "limits": limits, "crash_leftovers": leftovers, "filenames": filenames,
              "raw_seconds": times}
    (out / "ag2_executors.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    console.print(table(report))
    console.print(f"written: {out / 'ag2_executors.json'}", soft_wrap=True)
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30, help="timed print(1) blocks per executor")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default bench-out/ag2-executors-*)")
    parser.add_argument("--image", default=IMAGE)
    args = parser.parse_args()
    main(Console(), n=args.n, out=args.out, image=args.image)
