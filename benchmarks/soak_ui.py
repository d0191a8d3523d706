"""The `codeduet ui` side of the soak (benchmarks/soak.py): the server's memory and file descriptors sampled every
second, and viewers that poll the runs list and follow live runs' event streams as a person's browser would."""

from __future__ import annotations

import re
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.soak_check import proc_stats

ROW = re.compile(r'<tr class="([a-z_]+)" data-run="([^"/]+/[^"/]+)"')
MB = 2**20


class UISampler(threading.Thread):
    """The UI server's resident memory and open file descriptors, every second: (seconds, runs done, rss, fds)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.stop_event, self.runs_done = pid, threading.Event(), 0
        self.samples: list[tuple[float, int, int, int]] = []
        self.started = time.monotonic()

    def sample(self) -> dict[str, Any]:
        rss, fds = proc_stats(self.pid) or (0, 0)
        self.samples.append((round(time.monotonic() - self.started, 1), self.runs_done, rss, fds))
        return {"runs_done": self.runs_done, "rss_mb": round(rss / MB, 1), "fds": fds}

    def run(self) -> None:
        while not self.stop_event.wait(1.0):
            self.sample()


class Viewer(threading.Thread):
    """A person with the UI open: polls the runs list, opens a running run's page, follows its event stream to the
    end, and compares the lines it received with the run's events.jsonl."""

    def __init__(self, number: int, url: str, root: Path, stop: threading.Event):
        super().__init__(daemon=True)
        self.number, self.url, self.root, self.stop = number, url, root, stop
        self.stats = {"list_polls": 0, "pages": 0, "followed_to_end": 0, "events_received": 0, "short_streams": 0,
                      "stalled": 0, "errors": 0}
        self.seen: set[str] = set()
        self.last_error = ""

    def get(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path, timeout=60) as response:
            return response.read().decode("utf-8", "replace")

    def follow(self, run: str) -> None:
        received, ended = 0, False
        with urllib.request.urlopen(f"{self.url}/run/{run}/events", timeout=30) as response:
            for raw in response:
                line = raw.decode("utf-8", "replace")
                received += line.startswith("event: ev")
                if line.startswith("event: end"):
                    ended = True
                    break
        self.stats["events_received"] += received
        if not ended:
            self.stats["stalled"] += 1
            return
        self.stats["followed_to_end"] += 1
        on_disk = len((self.root / run / "events.jsonl").read_bytes().splitlines())
        self.stats["short_streams"] += received != on_disk

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.stats["list_polls"] += 1
                query = "/?status=failed" if self.stats["list_polls"] % 10 == 0 else "/"
                rows = ROW.findall(self.get(query))
                fresh = [r for s, r in rows if s == "running" and r not in self.seen]
                if not fresh:
                    time.sleep(1.0)
                    continue
                run = fresh[self.number % len(fresh)]
                self.seen.add(run)
                self.get(f"/run/{run}")
                self.stats["pages"] += 1
                self.follow(run)
            except TimeoutError:
                self.stats["stalled"] += 1
            except Exception as exc:  # counted and shown: the soak goes on
                self.stats["errors"] += 1
                self.last_error = f"{type(exc).__name__}: {exc}"[:200]
                time.sleep(1.0)
