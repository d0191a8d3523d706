"""What the UI starts in the background: a run (`python -m agents run ... --json`, the same code path as the CLI),
and replay actions (`python -m agents replay RUN --execute | --resume`), each a process whose output goes to a log
the page follows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.loop.hitl import CHANNEL_ENV
from agents.record.display import LIVE_ENV
from agents.record.run_folder import KEEP_SCENARIO_ENV
from agents.replay.find import find_runs

PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent.parent)


@dataclass
class Job:
    """One background process the UI started."""

    id: str
    kind: str
    """run | execute | resume"""
    argv: list[str]
    log: Path
    proc: subprocess.Popen
    run: Path | None = None
    """The run folder it works on (for a run: found once the process created it)."""
    started: float = field(default_factory=time.time)

    @property
    def done(self) -> bool:
        return self.proc.poll() is not None

    def output(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""


class Launcher:
    """Starts, finds and stops the UI's background processes."""

    def __init__(self, root: Path, logs: Path):
        self.root = Path(root)
        self.logs = Path(logs)
        self.jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def _start(self, kind: str, args: list[str], env: dict[str, str] | None = None, run: Path | None = None) -> Job:
        self.logs.mkdir(parents=True, exist_ok=True)
        job_id = uuid.uuid4().hex[:12]
        log = self.logs / f"{job_id}.log"
        argv = [sys.executable, "-m", "agents", *args]
        environ = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (PACKAGE_PARENT,
                   os.environ.get("PYTHONPATH")) if p), "COLUMNS": "120", "NO_COLOR": "1", **(env or {})}
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=environ, start_new_session=True)
        job = Job(job_id, kind, argv, log, proc, run)
        with self._lock:
            self.jobs[job_id] = job
        return job

    def start_run(self, scenario: Path, name: str, model: str | None, attempts: int | None,
                  human: str | None, keep_scenario: bool = False) -> Job:
        """`run SCENARIO --json` in the background; a person steers it from the page (`human`) through the run
        folder (agents/loop/hitl.py human_via_files). keep_scenario: the run keeps a copy of its scenario file."""
        before = set(find_runs(self.root, name)) if (self.root / name).is_dir() else set()
        args = ["run", str(scenario), "--json", "--workspace", str(self.root)]
        args += ["--model", model] if model else []
        args += ["--attempts", str(attempts)] if attempts else []
        args += ["--human", human] if human and human != "never" else []
        job = self._start("run", args, env={CHANNEL_ENV: "files", LIVE_ENV: "1",
                                            **({KEEP_SCENARIO_ENV: "1"} if keep_scenario else {})})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not job.done:
            new = [r for r in find_runs(self.root, name) if r not in before] if (self.root / name).is_dir() else []
            if new:
                job.run = new[0]
                break
            time.sleep(0.05)
        return job

    def replay(self, run: Path, kind: str, message: str | None = None) -> Job:
        """`replay RUN --execute`, or `--resume [--message M]`, in the background."""
        args = ["replay", str(run), "--workspace", str(self.root)]
        args += ["--execute"] if kind == "execute" else ["--resume", *(["--message", message] if message else [])]
        return self._start(kind, args, run=run)

    def job_for(self, run: Path) -> Job | None:
        """The run process the UI started for this run folder, if any."""
        with self._lock:
            return next((j for j in self.jobs.values() if j.kind == "run" and j.run == run), None)

    def stop(self, job: Job) -> bool:
        """Ctrl-C for the job (the run saves everything and ends as interrupted); False when it already ended."""
        if job.done:
            return False
        try:
            os.killpg(job.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            return False
        return True

    def stop_all(self) -> None:
        """At shutdown: every job still running gets Ctrl-C."""
        for job in list(self.jobs.values()):
            self.stop(job)

    def describe(self, job: Job) -> dict[str, Any]:
        return {"id": job.id, "kind": job.kind, "done": job.done, "exit_code": job.proc.poll(),
                "run": str(job.run) if job.run else None}
