"""The `codeduet` console script that `pip install -e .` (make setup) puts next to the venv's python."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, RUN_PY

COMMANDS = {"run", "chat", "replay", "runs", "sandbox", "model", "bench"}
ENV = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb"}


def console_script() -> Path:
    """The installed entry point; missing means pyproject lost [project.scripts] or the install is stale."""
    path = Path(sys.executable).parent / ("codeduet.exe" if os.name == "nt" else "codeduet")
    assert path.is_file(), f"no console script at {path}: run `make setup` (pip install -e .)"
    return path


def commands_in_help(argv: list[str]) -> set[str]:
    """The command names of a typer --help screen."""
    proc = subprocess.run([*argv, "--help"], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(re.findall(r"^│ (\w+)\s{2,}", proc.stdout, re.MULTILINE))


def test_codeduet_has_the_same_commands_as_run_py():
    script = commands_in_help([str(console_script())])
    assert script >= COMMANDS
    assert commands_in_help([sys.executable, str(RUN_PY)]) == script
    assert commands_in_help([sys.executable, "-m", "agents"]) == script
    assert commands_in_help([str(console_script()), "sandbox"]) == {"build", "status", "clean"}


@pytest.mark.docker
def test_codeduet_runs_the_offline_demo(sandbox_image, tmp_path):
    proc = subprocess.run([str(console_script()), "run", "scenarios/hello_scripted.yaml", "--workspace",
                           str(tmp_path / "ws")], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.rstrip().splitlines()[-1]
    assert re.fullmatch(rf"run: {re.escape(str(tmp_path / 'ws'))}/hello_scripted/\S+ status=success", last), last
    run_dir = Path(last.split()[1])
    assert (run_dir / "transcript.json").is_file() and (run_dir / "workspace" / "block02.py").is_file()
