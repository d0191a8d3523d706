"""Helpers shared by the hostile, crash, bad-input, load and CLI suites: leftover containers, run.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from agents.sandbox.docker_executor import LABEL

ROOT = Path(__file__).resolve().parent.parent
RUN_PY = ROOT / "run.py"


def containers_under(root: Path) -> list[str]:
    """Names of codeduet containers whose workspace lies under `root` (other runs may share the daemon)."""
    import docker

    prefix = str(Path(root).resolve())
    client = docker.from_env()
    names = []
    for c in client.containers.list(all=True, sparse=True, filters={"label": LABEL}):
        mounts = c.attrs.get("Mounts") or []
        if any(str(m.get("Source", "")).startswith(prefix) for m in mounts):
            names.append((c.attrs.get("Names") or [c.id])[0].lstrip("/"))
    return names


@pytest.fixture(autouse=True)
def no_leftover_containers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[None]:
    """After each test: no codeduet container of this test may remain."""
    yield
    if request.node.get_closest_marker("docker"):
        assert containers_under(tmp_path) == [], "a sandbox container was left behind"


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python run.py <args>` as a real subprocess, with a wide terminal so lines are not wrapped."""
    full_env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb", **(env or {})}
    return subprocess.run([sys.executable, str(RUN_PY), *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, cwd=cwd or ROOT)
