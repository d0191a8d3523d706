"""Helpers shared by the hostile, crash, bad-input, load and CLI suites: leftover containers, run.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.plugins.leak_guard import containers_under  # noqa: F401  (by the org.codeduet.workspace label)

ROOT = Path(__file__).resolve().parent.parent
RUN_PY = ROOT / "run.py"


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python run.py <args>` as a real subprocess, with a wide terminal so lines are not wrapped."""
    full_env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb", **(env or {})}
    return subprocess.run([sys.executable, str(RUN_PY), *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, cwd=cwd or ROOT)
