"""A batch as Ray tasks: one task per scenario on whichever node advertises a free `sandbox` (and `llm`)."""

from __future__ import annotations

import os
import re
import time
from contextlib import suppress
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from agents.loop.errors import BadInputError, EnvironmentProblem
from agents.loop.extras import needs
from agents.scenario.spec import Scenario

ADDRESS = re.compile(r"local|auto|ray://[^\s/:]+:\d+|[^\s/:]+:\d+")
CANCEL_GRACE_S = 20
"""After Ctrl-C: how long cancelled runs get to write their transcript and remove their sandbox."""
NO_LLM = {"scripted"}
"""Providers that need no model instance on the node: their tasks ask for a sandbox only."""


def import_ray() -> Any:
    """The ray module, or a one-line error saying how to install it."""
    with needs("ray", "--ray"):
        import ray

    return ray


def model_provider(scenario: Scenario, model: str | None) -> str | None:
    """The provider the run will use (--model, else the scenario's, else the model table's default); None if
    unknown."""
    spec = model if model is not None else scenario.model
    if isinstance(spec, dict):
        return str(spec.get("provider"))
    try:
        from agents.models.config import load_models_file

        models, _, _ = load_models_file()
        return str(models.models[spec or models.default].get("provider"))
    except Exception:
        return None  # the node may know the name: ask for an llm slot to be safe


def task_resources(scenario: Scenario, model: str | None) -> dict[str, float]:
    """Custom resources one run holds on its node: a sandbox, and an llm slot unless the model is scripted."""
    needs = {"sandbox": 1.0}
    if model_provider(scenario, model) not in NO_LLM:
        needs["llm"] = 1.0
    return needs


CLIENT_TRIES = 3
"""Joins of a ray:// address tried when the client proxy fails to start this client's server."""
CLIENT_START_FAILED = "Initialization failure from server"


def connect(ray: Any, address: str, sandboxes: int | None) -> None:
    """`local` starts a private Ray instance advertising `sandboxes` sandboxes and one llm; else join `address`."""
    if not ADDRESS.fullmatch(address):
        raise BadInputError(f"--ray {address!r}: give local, auto, ray://host:port or host:port")
    if address != "local" and sandboxes is not None:
        raise BadInputError("--jobs sets the sandboxes of --ray local only; a cluster's nodes advertise theirs "
                            "with `ray start --resources '{\"sandbox\": N, \"llm\": 1}'`")
    kwargs: dict[str, Any] = {"configure_logging": False, "log_to_driver": False}
    if address == "local":
        cores = os.cpu_count() or 1
        kwargs.update(num_cpus=cores, include_dashboard=False,
                      resources={"sandbox": float(sandboxes or cores), "llm": 1.0})
    for attempt in range(1, CLIENT_TRIES + 1):
        try:
            ray.init(address=address, **kwargs)
            return
        except Exception as exc:
            # a Ray client proxy starts one server per client; on a loaded head that start can time out
            if address.startswith("ray://") and CLIENT_START_FAILED in str(exc) and attempt < CLIENT_TRIES:
                with suppress(Exception):
                    ray.shutdown()
                time.sleep(5)
                continue
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EnvironmentProblem(f"could not start or join Ray at {address!r}: {first}; start a cluster with "
                                     "`ray start --head --resources '{\"sandbox\": 2, \"llm\": 1}'`") from None


def check_capacity(ray: Any, needs: list[dict[str, float]]) -> None:
    """Fail now, not hang, when no node advertises what the tasks ask for."""
    have = ray.cluster_resources()
    for name in sorted({k for n in needs for k in n}):
        if have.get(name, 0) < 1:
            raise EnvironmentProblem(f"the Ray cluster advertises no '{name}' resource, so no task could start; "
                                     "give each node `ray start ... --resources '{\"sandbox\": N, \"llm\": 1}'`")


def crashed_row(exc: Exception) -> dict[str, Any]:
    """The row of a task Ray could not finish (its worker or node died twice, or the task itself broke)."""
    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
    return {"status": "error", "reason": f"the Ray task failed: {type(exc).__name__}: {first}"[:300], "exit_code": 3}


@lru_cache(maxsize=1)
def _remote_task(ray: Any) -> Any:
    """run_on_node as a Ray remote function, made once (Ray exports it to the cluster once per session)."""
    from agents.cli.scaleout.node_task import run_on_node

    return ray.remote(run_on_node)


def submit(ray: Any, index: int, scenario: Scenario, need: dict[str, float], overrides: dict[str, Any]) -> Any:
    """Start one scenario as a Ray task holding `need` on its node; retried once if its worker crashes, never if
    the run itself fails (that comes back as an error row)."""
    from agents.cli.scaleout.payload import ship_scenario

    options: dict[str, Any] = {"num_cpus": 0, "resources": need, "max_retries": 1, "retry_exceptions": False,
                               "name": f"codeduet:{scenario.name}"}
    if "llm" in need:  # llama.cpp's spinning OpenMP threads collapse when the node's cores are shared (as --jobs)
        options["runtime_env"] = {"env_vars": {"OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}}
    task = _remote_task(ray).options(**options)
    return task.remote(index, ship_scenario(scenario), overrides)


def collect(ray: Any, ref: Any, workspaces: Path) -> dict[str, Any]:
    """A finished task's summary row, its run folder extracted safely into `workspaces`."""
    from agents.cli.scaleout.archive import UnsafeArchive, safe_extract

    try:
        out = ray.get(ref)
    except Exception as exc:  # the worker crashed again after its retry, or the task itself broke
        return crashed_row(exc)
    row = {**out["row"], **{k: out[k] for k in ("node_id", "ray_attempt", "pid", "task_started", "task_ended")}}
    if out["run"]:
        row["run_dir"] = str(workspaces / out["run"])
        try:
            skipped = safe_extract(out["archive"], workspaces, out["run"])
        except UnsafeArchive as exc:
            row.update(status="error", reason=str(exc), exit_code=3)
        else:
            if skipped:
                row["archive_skipped"] = skipped
    return row


def run_on_ray(scenarios: list[tuple[Path, Scenario]], address: str, sandboxes: int | None,
               overrides: dict[str, Any], workspaces: Path, on_row: Callable[[dict[str, Any]], None]
               ) -> list[dict[str, Any]]:
    """Fan the scenarios out as Ray tasks, bring every run folder back into `workspaces`; rows in input order."""
    ray = import_ray()
    needs = [task_resources(s, overrides.get("model")) for _, s in scenarios]
    connect(ray, address, sandboxes)
    interrupted = False
    try:
        check_capacity(ray, needs)
        pending = {submit(ray, i, s, need, overrides): (i, path)
                   for i, ((path, s), need) in enumerate(zip(scenarios, needs))}
        rows: dict[int, dict[str, Any]] = {}
        try:
            while pending:
                (ref,), _ = ray.wait(list(pending), num_returns=1)
                index, path = pending.pop(ref)
                rows[index] = {"scenario": str(path), **collect(ray, ref, workspaces)}
                on_row(rows[index])
        except KeyboardInterrupt:  # each running task gets a KeyboardInterrupt: its run records and cleans up
            for ref in pending:
                ray.cancel(ref)
            ray.wait(list(pending), num_returns=len(pending), timeout=CANCEL_GRACE_S)
            interrupted = True
            raise
        return [rows[i] for i in sorted(rows)]
    finally:
        ray.shutdown()
        if interrupted and address == "local":
            remove_local_orphans()


def remove_local_orphans(wait_s: float = 10.0) -> None:
    """After Ctrl-C on `--ray local`: a cancelled task's object resolves before its worker has finished removing its
    sandbox, and shutdown then kills that worker; the container, labelled with the dead worker's pid, is removed here
    (waiting while a container still belongs to a live Ray worker of this host, at most `wait_s`)."""
    import time

    import docker

    from agents.sandbox.cleanup import codeduet_containers, remove_orphans
    from agents.sandbox.docker_executor import LABEL_PID

    client = docker.from_env()
    deadline = time.monotonic() + wait_s
    while True:
        remove_orphans(client)
        live = [c for c in codeduet_containers(client) if _is_ray_worker(c.labels.get(LABEL_PID, ""))]
        if not live or time.monotonic() > deadline:
            return
        time.sleep(0.5)


def _is_ray_worker(pid: str) -> bool:
    """A live process of this host whose command line is a Ray worker's (`ray::...`)."""
    try:
        return Path(f"/proc/{int(pid)}/cmdline").read_bytes().startswith(b"ray::")
    except (OSError, ValueError):
        return False
