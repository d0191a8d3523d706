"""Finding and removing codeduet containers, including ones orphaned by a killed process."""

from __future__ import annotations

import os
import socket
from typing import Any

from agents.sandbox.docker_executor import LABEL, LABEL_HOST, LABEL_PID


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def codeduet_containers(client: Any) -> list[Any]:
    """Every container (running or not) carrying the codeduet run label."""
    # ignore_removed: other runs remove their containers while the list is being inspected
    return client.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True)


def is_orphan(container: Any) -> bool:
    """Started on this host by a process that no longer exists."""
    labels = container.labels or {}
    if labels.get(LABEL_HOST) != socket.gethostname():
        return False
    try:
        return not _alive(int(labels.get(LABEL_PID, "0")))
    except ValueError:
        return True


def remove_orphans(client: Any, everything: bool = False) -> list[str]:
    """Remove orphaned codeduet containers (or all of them); return their names."""
    removed = []
    for container in codeduet_containers(client):
        if everything or is_orphan(container):
            try:
                container.remove(force=True, v=True)  # with its workspace volume
                removed.append(container.name)
            except Exception:
                pass
    return removed
