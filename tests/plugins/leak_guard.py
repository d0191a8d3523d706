"""Leak guard (a pytest plugin, registered in tests/conftest.py): a test that starts a sandbox container must be
marked `docker`, and must leave no container behind.

A test's containers are the ones created while it ran whose `org.codeduet.workspace` label lies under its tmp_path,
or that this pytest process started itself; runs from other checkouts on the same daemon are never counted.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from agents.sandbox.docker_executor import LABEL, LABEL_PID, LABEL_WORKSPACE

_claimed: set[str] = set()
"""Containers already attributed to an earlier test of this session."""


def _client() -> Any:
    """A docker client, or None when no daemon answers (then there is nothing to guard)."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
        return client
    except Exception:
        return None


def _under(path: str, root: Path) -> bool:
    return path == str(root) or path.startswith(str(root) + os.sep)


def containers_under(root: Path) -> list[str]:
    """Names of the codeduet containers (running or not) whose workspace lies under `root`."""
    client = _client()
    if client is None:
        return []
    root = Path(root).resolve()
    return sorted(c.name for c in client.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True)
                  if _under((c.labels or {}).get(LABEL_WORKSPACE, ""), root))


def created_since(client: Any, since: float, root: Path) -> dict[str, str]:
    """{id: name} of the codeduet containers created since `since` by this test: under `root`, or by this process."""
    root = Path(root).resolve()
    found = {}
    for event in client.api.events(since=f"{since:.3f}", until=f"{time.time():.3f}", decode=True,
                                   filters={"type": "container", "event": "create", "label": LABEL}):
        attrs = (event.get("Actor") or {}).get("Attributes") or {}
        cid = event.get("id") or (event.get("Actor") or {}).get("ID")
        mine = _under(attrs.get(LABEL_WORKSPACE, ""), root) or attrs.get(LABEL_PID) == str(os.getpid())
        if cid and mine and cid not in _claimed:
            found[cid] = attrs.get("name", cid[:12])
    return found


def still_there(client: Any, ids: dict[str, str]) -> list[str]:
    """Names of those containers that still exist."""
    import docker

    left = []
    for cid, name in ids.items():
        try:
            client.containers.get(cid)
            left.append(name)
        except docker.errors.NotFound:
            pass
    return left


@pytest.fixture(autouse=True)
def no_leftover_containers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[None]:
    """Every test: containers it started are gone at its end, and only tests marked `docker` start any."""
    client = _client()
    since = time.time() - 1
    yield
    if client is None:
        return
    created = created_since(client, since, tmp_path)
    _claimed.update(created)
    if not created:
        return
    marked = request.node.get_closest_marker("docker") is not None
    assert marked, f"this test started sandbox container(s) {sorted(created.values())}: mark it @pytest.mark.docker"
    left = still_there(client, created)
    assert left == [], f"sandbox container(s) left behind: {left}"
