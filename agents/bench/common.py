"""What every benchmark shares: the machine it ran on, the commit, percentiles, and a /proc memory reader."""

from __future__ import annotations

import math
import os
import platform
import statistics
import subprocess
from pathlib import Path
from typing import Any

from agents.record.paths import PROJECT_ROOT


def machine(docker: bool = False) -> dict[str, Any]:
    """Cores, CPU model, RAM, kernel, Python and the load average; with `docker`, the engine's version, storage
    driver and cgroup version too."""
    cpu = platform.processor() or ""
    try:
        cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                    if ln.startswith("model name")), cpu)
    except OSError:
        pass
    info: dict[str, Any] = {"cores": os.cpu_count(), "cpu": cpu, "platform": platform.platform(),
                            "kernel": platform.release(), "python": platform.python_version()}
    try:
        info["ram_gib"] = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
        info["load_avg_1m"] = round(os.getloadavg()[0], 2)
    except (OSError, ValueError):
        pass
    if docker:
        try:
            import docker as docker_sdk

            d = docker_sdk.from_env().info()
            info.update(docker=d.get("ServerVersion"), storage=d.get("Driver"), cgroup=d.get("CgroupVersion"))
        except Exception:
            pass
    return info


def git_commit() -> str | None:
    """HEAD of the project, with '+dirty' when the tree has changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT_ROOT, capture_output=True,
                              text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=PROJECT_ROOT, capture_output=True, text=True,
                               timeout=10).stdout.strip()
        return (head + ("+dirty" if dirty else "")) or None
    except (OSError, subprocess.SubprocessError):
        return None


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def ms(values: list[float]) -> dict[str, float]:
    """Median and p90 of durations in seconds, as milliseconds."""
    return {"median_ms": round(statistics.median(values) * 1000, 1),
            "p90_ms": round((percentile(values, 90) or 0) * 1000, 1)}


def process_tree(root: int) -> dict[int, int]:
    """`root` and all its descendants, from /proc: pid -> resident bytes."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        children.setdefault(int(fields.get("PPid", "0").strip() or 0), []).append(int(entry))
        rss[int(entry)] = int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        tree[pid] = rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return tree
