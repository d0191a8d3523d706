"""What one Ray task does on its node: run one shipped scenario with the product's run_scenario, return the folder."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

SCRATCH_ENV = "CODEDUET_RAY_SCRATCH"
"""Node-local folder for runs in flight (default: the system temp folder); each task gets its own subfolder."""


def _alive(pid: int) -> bool:
    """The process exists on this host and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def remove_stale(root: Path) -> None:
    """Remove scratch folders of this host's tasks whose worker died (kill -9, OOM): Ray retried or reported them."""
    for task_file in root.glob("codeduet-ray-*/task.json"):
        try:
            task = json.loads(task_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # being written
        if task.get("host") == socket.gethostname() and not _alive(int(task.get("pid", 0))):
            shutil.rmtree(task_file.parent, ignore_errors=True)


def _ray_facts() -> dict[str, Any]:
    """This node's id and this task's attempt (1 = first run, 2 = the retry after a crash); None outside Ray."""
    try:
        import ray

        ctx = ray.get_runtime_context()
        node = ctx.get_node_id()
    except Exception:
        return {"node_id": None, "ray_attempt": None}
    try:  # Ray keeps the attempt number in the core worker; no public accessor as of Ray 2.60
        attempt = int(ray._private.worker.global_worker.core_worker.get_current_task_attempt_number()) + 1
    except Exception:
        attempt = None
    return {"node_id": node, "ray_attempt": attempt}


def run_on_node(index: int, payload: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Run the scenario into a node-local workspaces folder; return its summary row and the run folder as tar bytes.

    Every failure of the run itself (bad scenario on this node, no image, no model, a bug) comes back as an error
    row, never as an exception: Ray retries only a crashed worker, never a run that failed on its own."""
    from agents.cli.common import summary
    from agents.cli.scaleout.archive import pack_folder
    from agents.cli.scaleout.payload import land_scenario
    from agents.loop.conversation import RunOptions, run_scenario
    from agents.loop.errors import EXIT_FAILED, CodeduetError, exit_code_for
    from agents.scenario.spec import load_scenario

    root = Path(os.environ.get(SCRATCH_ENV) or tempfile.gettempdir())
    remove_stale(root)
    scratch = Path(tempfile.mkdtemp(prefix="codeduet-ray-", dir=root))
    task = {"index": index, "pid": os.getpid(), "host": socket.gethostname(), "task_started": time.time(),
            **_ray_facts()}
    (scratch / "task.json").write_text(json.dumps(task), encoding="utf-8")
    row: dict[str, Any] = {}
    archive, run = None, None
    try:
        workspaces = scratch / "workspaces"
        try:
            scenario = load_scenario(land_scenario(payload, scratch / "scenario"))
            started = time.perf_counter()  # like `run --json`: the run itself, loading excluded
            result = run_scenario(scenario, RunOptions(workspaces=workspaces, **overrides))
            row = summary(result, time.perf_counter() - started)
            row["exit_code"] = result.error.exit_code if result.error else exit_code_for(result.status)
        except CodeduetError as exc:
            row = {"status": "error", "reason": str(exc), "exit_code": exc.exit_code}
        except Exception as exc:  # a bug: one line, not a retry
            row = {"status": "error", "reason": f"{type(exc).__name__}: {exc}".splitlines()[0],
                   "exit_code": EXIT_FAILED}
        run_dirs = [p.parent for p in workspaces.glob("*/*/events.jsonl")]
        if run_dirs:
            run = run_dirs[0].relative_to(workspaces).as_posix()
            archive = pack_folder(workspaces, run)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {**task, "row": row, "run": run, "archive": archive, "task_ended": time.time()}
