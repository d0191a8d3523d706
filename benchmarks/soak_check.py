"""What a soak leaves behind, checked: every run folder whole, no sandbox container or reaper process of its runs
left, and a process's resident memory and open file descriptors read from /proc."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from agents.record.run_folder import EVENTS, TRANSCRIPT
from agents.sandbox.docker_executor import LABEL, LABEL_WORKSPACE
from agents.sandbox.reaper import WATCHDOG


def check_run(run: Path) -> list[str]:
    """Problems of one run folder: every line of events.jsonl parses, the first is the start and the last the end,
    the messages are numbered 0..n-1, and transcript.json exists and holds the same n messages."""
    try:
        lines = (run / EVENTS).read_bytes().split(b"\n")
    except OSError as exc:
        return [f"{run}: no {EVENTS} ({exc.strerror})"]
    if lines and lines[-1] == b"":
        lines.pop()
    else:
        return [f"{run}: {EVENTS} does not end with a newline"]
    problems, events = [], []
    for n, line in enumerate(lines, 1):
        try:
            events.append(json.loads(line))
        except ValueError:
            problems.append(f"{run}: {EVENTS} line {n} does not parse")
    types = [e.get("type") for e in events]
    if not types or types[0] != "start":
        problems.append(f"{run}: {EVENTS} does not begin with a start event")
    if not types or types[-1] != "end" or types.count("end") != 1:
        problems.append(f"{run}: {EVENTS} does not end with one end event")
    indexes = [e.get("index") for e in events if e.get("type") == "message"]
    if indexes != list(range(len(indexes))):
        problems.append(f"{run}: message events numbered {indexes[:5]}…, not 0..{len(indexes) - 1}")
    try:
        transcript = json.loads((run / TRANSCRIPT).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [*problems, f"{run}: {TRANSCRIPT} unreadable ({exc})"]
    if len(transcript.get("messages") or []) != len(indexes):
        problems.append(f"{run}: {TRANSCRIPT} has {len(transcript.get('messages') or [])} messages, "
                        f"{EVENTS} {len(indexes)}")
    if events and types[-1] == "end" and events[-1].get("status") != transcript.get("status"):
        problems.append(f"{run}: end event says {events[-1].get('status')}, {TRANSCRIPT} {transcript.get('status')}")
    return problems


def check_runs(root: Path) -> dict[str, Any]:
    """Every run folder under root (workspaces/<scenario>/<run-id>/) checked: counts, statuses, the problems."""
    runs = sorted({p.parent for name in (EVENTS, TRANSCRIPT) for p in Path(root).glob(f"*/*/{name}")})
    problems: list[str] = []
    statuses: Counter[str] = Counter()
    events = messages = 0
    for run in runs:
        found = check_run(run)
        problems.extend(found)
        try:
            transcript = json.loads((run / TRANSCRIPT).read_text(encoding="utf-8"))
            statuses[str(transcript.get("status"))] += 1
            messages += len(transcript.get("messages") or [])
            events += sum(1 for line in (run / EVENTS).read_bytes().splitlines() if line.strip())
        except (OSError, ValueError):
            statuses["unreadable"] += 1
    return {"run_folders": len(runs), "events": events, "messages": messages, "statuses": dict(statuses),
            "runs_with_problems": len({p.split(":", 1)[0] for p in problems}), "problems": problems[:20]}


def reaper_processes(run_ids: set[str]) -> list[int]:
    """Live reaper watchdogs (agents/sandbox/reaper.py) watching a container of one of these runs (the label
    `org.codeduet.run=<run-id>` or `<run-id>-a2`, …)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 5 and argv[1] == b"-c" and argv[2].decode(errors="replace") == WATCHDOG:
            run_id = argv[4].decode(errors="replace").removeprefix(f"{LABEL}=")
            if run_id in run_ids or run_id.rsplit("-", 1)[0] in run_ids:
                found.append(int(entry))
    return found


def own_containers(client: Any, prefix: Path) -> list[str]:
    """Names of codeduet sandbox containers (by label), running or not, whose workspace lies under prefix."""
    base = str(Path(prefix).resolve())
    try:
        listed = client.containers.list(all=True, sparse=True, filters={"label": LABEL}, ignore_removed=True)
    except Exception:
        return []
    return [str(c.attrs.get("Names") or c.id) for c in listed
            if str((c.attrs.get("Labels") or {}).get(LABEL_WORKSPACE, "")).startswith(base)]


def proc_stats(pid: int) -> tuple[int, int] | None:
    """(resident bytes, open file descriptors) of a process, None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    rss = next((int(ln.split()[1]) * 1024 for ln in status.splitlines() if ln.startswith("VmRSS:")), 0)
    return rss, fds
