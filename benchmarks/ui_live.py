"""`codeduet ui` under load: how long an event written to events.jsonl takes to reach a page, how fast the runs list
answers with 2,000 run folders, and the server's memory with 10 viewers following a live run.

    python -m benchmarks.ui_live [--events 200] [--runs 2000] [--viewers 10] [--out FILE]

A real `codeduet ui` server process; the run folders are written by the product's own recorder (JsonlRecorder),
as runs write them; the viewers are SSE clients reading the run page's event stream, as the page's script does.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from agents.bench.common import git_commit, machine, ms, process_tree
from agents.record.paths import PROJECT_ROOT
from agents.record.run_folder import new_run_dir
from agents.record.transcript import JsonlRecorder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_runs(root: Path, n: int) -> None:
    """n finished runs across 20 scenarios, each a task, a reply and its report, written by the recorder."""
    for i in range(n):
        run_dir, run_id = new_run_dir(root, f"scenario{i % 20:02d}")
        rec = JsonlRecorder(run_dir, {"run_id": run_id, "run_dir": str(run_dir),
                                      "scenario": {"name": run_dir.parent.name},
                                      "model": {"name": "scripted", "provider": "scripted"}})
        rec.event("message", sender="user_proxy", role="task", content="Print the answer.", attempt=1)
        rec.event("message", sender="assistant", role="assistant", content="```python\nprint(42)\n```", attempt=1)
        rec.event("message", sender="user_proxy", role="execution", content="42", attempt=1,
                  outcome={"kind": "executed", "executions": [{"exit_code": 0, "output": "42"}]})
        rec.finish("success" if i % 3 else "failed", "bench")


class Server:
    def __init__(self, root: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([sys.executable, "-m", "agents", "ui", "--port", str(self.port), "--workspace",
                                      str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     cwd=str(PROJECT_ROOT))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the ui server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def list_times(server: Server, rounds: int) -> dict[str, Any]:
    """The runs list: the first request (cold: every run is read), then warm ones, and a status-filtered page."""
    def timed(path: str) -> float:
        started = time.perf_counter()
        with urllib.request.urlopen(server.url + path, timeout=120) as response:
            response.read()
        return time.perf_counter() - started

    cold = timed("/?status=failed")
    warm = [timed("/") for _ in range(rounds)]
    filtered = [timed("/?status=failed&page=3") for _ in range(rounds)]
    return {"cold_filtered_s": round(cold, 3), "page": ms(warm), "filtered_page": ms(filtered)}


def follow(url: str, seen: dict[int, float], stop: threading.Event, ready: threading.Event) -> None:
    """An SSE client: notes when each `ev` line with a numbered payload arrives."""
    with urllib.request.urlopen(url, timeout=120) as response:
        ready.set()
        for raw in response:
            if stop.is_set():
                return
            line = raw.decode("utf-8", "replace")
            if line.startswith("data: ") and '"bench_seq"' in line:
                seq = json.loads(line[6:])["bench_seq"]
                seen.setdefault(seq, time.perf_counter())


def live(server: Server, root: Path, events: int, viewers: int) -> dict[str, Any]:
    """Write `events` lines into a live run's events.jsonl (one every 20 ms) with `viewers` followers; the delay of
    each to its first follower, and the server's memory meanwhile."""
    run_dir, run_id = new_run_dir(root, "live")
    rec = JsonlRecorder(run_dir, {"run_id": run_id, "run_dir": str(run_dir), "scenario": {"name": "live"}})
    url = f"{server.url}/run/live/{run_id}/events"
    stop, seen, threads = threading.Event(), [dict() for _ in range(viewers)], []
    for i in range(viewers):
        ready = threading.Event()
        t = threading.Thread(target=follow, args=(url, seen[i], stop, ready), daemon=True)
        t.start()
        ready.wait(10)
        threads.append(t)
    time.sleep(0.5)
    written: dict[int, float] = {}
    peak = 0
    for seq in range(events):
        written[seq] = time.perf_counter()
        rec.event("bench", bench_seq=seq)
        peak = max(peak, sum(process_tree(server.proc.pid).values()))
        time.sleep(0.02)
    time.sleep(1.0)
    stop.set()
    rec.finish("success", "bench")
    delays = [seen[0][s] - written[s] for s in written if s in seen[0]]
    everyone = [v[s] - written[s] for v in seen for s in written if s in v]
    return {"events": events, "viewers": viewers, "delivered_to_first": len(delays),
            "delivered_to_all": len(everyone), "delay_first_viewer": {**ms(delays), "p95_ms": round(
                sorted(delays)[int(len(delays) * 0.95) - 1] * 1000, 1)} if delays else None,
            "delay_all_viewers_p95_ms": round(sorted(everyone)[int(len(everyone) * 0.95) - 1] * 1000, 1)
            if everyone else None, "server_peak_rss_mb": round(peak / 2**20, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--viewers", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="codeduet-ui-bench-") as tmp:
        root = Path(tmp) / "ws"
        started = time.perf_counter()
        make_runs(root, args.runs)
        made = time.perf_counter() - started
        server = Server(root)
        try:
            idle = sum(process_tree(server.proc.pid).values())
            listing = list_times(server, args.rounds)
            following = live(server, root, args.events, args.viewers)
        finally:
            server.stop()
    report = {"machine": machine(), "commit": git_commit(), "runs": args.runs, "made_runs_s": round(made, 1),
              "server_idle_rss_mb": round(idle / 2**20, 1), "runs_list": listing, "live": following}
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
