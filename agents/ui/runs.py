"""The runs the UI shows: found under the workspaces root (agents/replay/find.py), summarised once per change of
their files (a small cache keyed on the files' mtimes), filtered and paged so thousands of runs stay fast."""

from __future__ import annotations

import os
import re
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.loop.errors import CodeduetError
from agents.record.run_folder import EVENTS, TRANSCRIPT, is_run
from agents.record.transcript import load_transcript
from agents.replay.find import find_runs
from agents.replay.timeline import duration

SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
"""What a scenario name or a run id may look like in a URL; anything else never reaches the filesystem."""


def run_path(root: Path, scenario: str, run_id: str) -> Path | None:
    """The run folder for a URL's (scenario, run id), or None when either is not a plain name or the folder is
    not a run below root (no `..`, no separators, no links out)."""
    if not (SEGMENT.fullmatch(scenario) and SEGMENT.fullmatch(run_id)) or ".." in (scenario + run_id):
        return None
    base = root.resolve()
    path = (base / scenario / run_id).resolve()
    if path.parent.parent != base or not is_run(path):
        return None
    return path


def is_alive(process: dict[str, Any] | None) -> bool:
    """Whether the process that ran it is still running here (a run started on another host: unknown, False)."""
    if not process or process.get("host") != socket.gethostname():
        return False
    try:
        os.kill(int(process.get("pid") or 0), 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
    return True


@dataclass
class RunRow:
    """One line of the runs list."""

    scenario: str
    run_id: str
    path: Path
    status: str
    """success | failed | max_replies | timeout | interrupted | error | running"""
    reason: str
    model: str
    attempts: int
    turns: int
    tokens: int
    seconds: float | None
    started: str

    @property
    def duration(self) -> str:
        """Its time as the replay header says it ('6 min 27 s')."""
        return duration(self.seconds)

    @property
    def url(self) -> str:
        return f"/run/{self.scenario}/{self.run_id}"


def summarize(run: Path) -> RunRow:
    """A run folder -> its row (a run whose process is alive and that has no end yet is `running`)."""
    try:
        t = load_transcript(run)
    except CodeduetError as exc:
        return RunRow(run.parent.name, run.name, run, "error", str(exc), "?", 0, 0, 0, None, "")
    tot = t.get("totals") or {}
    status = t.get("status", "?")
    if t.get("recovered_from_events") and status == "interrupted" and is_alive(t.get("process")):
        status = "running"
    model = t.get("model") or {}
    return RunRow(run.parent.name, run.name, run, status, str(t.get("reason") or ""),
                  f"{model.get('name', '?')} ({model.get('provider', '?')})", int(tot.get("attempts") or 1),
                  int(tot.get("turns") or 0),
                  int((tot.get("prompt_tokens") or 0) + (tot.get("completion_tokens") or 0)),
                  tot.get("seconds"), str(t.get("started_at") or ""))


class RunIndex:
    """Summaries of the runs under root, each recomputed only when its files changed."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._cache: dict[Path, tuple[tuple[int, int], RunRow]] = {}
        self._lock = threading.Lock()

    def _stamp(self, run: Path) -> tuple[int, int]:
        def mtime(name: str) -> int:
            try:
                return (run / name).stat().st_mtime_ns
            except OSError:
                return 0
        return mtime(EVENTS), mtime(TRANSCRIPT)

    def row(self, run: Path) -> RunRow:
        """The run's row, from the cache when its files did not change (a running run is checked every time)."""
        stamp = self._stamp(run)
        with self._lock:
            hit = self._cache.get(run)
        if hit is not None and hit[0] == stamp and hit[1].status != "running":
            return hit[1]
        row = summarize(run)
        with self._lock:
            self._cache[run] = (stamp, row)
        return row

    def scenarios(self) -> list[str]:
        """Scenario folders that hold runs, by name."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and SEGMENT.fullmatch(p.name))

    def page(self, status: str | None = None, scenario: str | None = None, page: int = 1,
             per_page: int = 50) -> tuple[list[RunRow], int]:
        """Runs newest first, filtered by status and scenario: (this page's rows, how many match in all)."""
        if scenario and not SEGMENT.fullmatch(scenario):
            return [], 0
        runs = find_runs(self.root, scenario) if self.root.is_dir() else []
        start = (max(1, page) - 1) * per_page
        if not status:  # no status filter: only this page's runs are read
            return [self.row(r) for r in runs[start:start + per_page]], len(runs)
        rows = [row for row in map(self.row, runs) if row.status == status]
        return rows[start:start + per_page], len(rows)
