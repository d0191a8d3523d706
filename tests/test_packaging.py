"""Run from any folder, as an installed `codeduet` is: the model table's lookup order, runs under ./workspaces."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import IMAGE, py
from tests.helpers import ROOT, run_cli

pytestmark = pytest.mark.docker

SHIPPED = ROOT / "agents" / "models" / "llm.yaml"


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a user with no codeduet settings: no CODEDUET_* variables, an empty config folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEDUET_") and k != "PYTHONPATH"}
    return {**env, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb",
            **extra}


def cli(folder: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`codeduet ARGS` (as run.py, this checkout's code) with `folder` as the current folder and `env` alone."""
    return run_cli(*args, env=env, cwd=folder, inherit=False)


def write_table(path: Path, says: str) -> Path:
    """A model table whose default model (`mine`) runs `print(says)`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"default": "mine", "models": {
        "mine": {"provider": "scripted", "model": "scripted", "replies": [py(f"print({says!r})")]}}}))
    return path


def write_scenario(folder: Path, model: dict | None = None, sandbox: dict | None = None) -> Path:
    """s.yaml in `folder`; in the Docker sandbox unless another is given (the local executor, where the container is
    not what a test is about)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {"name": "s", "task": "Print something.", "strategy": {"attempts": 1},
            "sandbox": sandbox or {"image": IMAGE}}
    if model:
        data["model"] = model
    (folder / "s.yaml").write_text(yaml.safe_dump(data))
    return folder / "s.yaml"


def printed(proc: subprocess.CompletedProcess) -> str:
    """What the run's executed block printed, from its transcript (the run folder is on the closing line)."""
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    run_dir = Path(proc.stdout.rstrip().splitlines()[-1].split()[1])
    messages = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return " ".join(e["output"] for m in messages if m.get("role") == "execution"
                    for e in m["outcome"]["executions"])


def test_the_model_table_is_looked_up_in_order(tmp_path):
    """$CODEDUET_CONFIGS, then ./configs/llm.yaml, then the user config folder, then the table in the package."""
    project = tmp_path / "project"
    write_scenario(project, sandbox={"kind": "local"})
    env_table = write_table(tmp_path / "elsewhere" / "team.yaml", "from CODEDUET_CONFIGS")
    cwd_table = write_table(project / "configs" / "llm.yaml", "from ./configs")
    user_table = write_table(tmp_path / "xdg" / "codeduet" / "llm.yaml", "from the user folder")
    env = clean_env(tmp_path)

    named = cli(project, "run", "s.yaml", env={**env, "CODEDUET_CONFIGS": str(env_table)})  # a file, not a folder
    assert "from CODEDUET_CONFIGS" in printed(named)
    assert "from ./configs" in printed(cli(project, "run", "s.yaml", env=env))
    cwd_table.unlink()
    assert "from the user folder" in printed(cli(project, "run", "s.yaml", env=env))
    refused = cli(project, "run", "s.yaml", "--model", "scripted", env=env)  # the shipped table's entry: not here
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"error: unknown model 'scripted': {user_table} defines mine"
    user_table.unlink()
    # no table of the user's: the one inside the package (its `scripted` entry fixes an IndexError, then prints 3)
    assert "IndexError" in printed(cli(project, "run", "s.yaml", "--model", "scripted", env=env))
    status = cli(project, "model", "status", env=env)
    assert status.stdout.splitlines()[0] == f"model table: {SHIPPED}"


def test_codeduet_configs_naming_nothing_is_one_line(tmp_path):
    project = tmp_path / "project"
    write_scenario(project)
    proc = cli(project, "run", "s.yaml", env=clean_env(tmp_path, CODEDUET_CONFIGS=str(tmp_path / "nope.yaml")))
    assert proc.returncode == 3
    assert proc.stderr.strip() == (f"error: CODEDUET_CONFIGS={tmp_path / 'nope.yaml'}: no such file (name a "
                                   "llm.yaml, or a folder holding one, or unset it to use ./configs/llm.yaml or "
                                   "the default)")


def test_runs_go_to_workspaces_of_the_current_folder(sandbox_image, tmp_path):
    folder = tmp_path / "somewhere"
    write_scenario(folder, model={"provider": "scripted", "replies": [py("print(6 * 7)")]})
    env = clean_env(tmp_path)
    proc = cli(folder, "run", "s.yaml", env=env)
    assert "42" in printed(proc)
    run_dir = Path(proc.stdout.rstrip().splitlines()[-1].split()[1])
    assert run_dir.parent == folder / "workspaces" / "s"
    listed = cli(folder, "runs", env=env)
    assert listed.returncode == 0 and run_dir.name in listed.stdout
    shown = cli(folder, "replay", str(run_dir.relative_to(folder)), env=env)
    assert shown.returncode == 0 and "print(6 * 7)" in shown.stdout
    assert not (ROOT / "workspaces" / "s" / run_dir.name).exists()


def test_help_says_where_runs_and_models_come_from(tmp_path):
    text = " ".join(cli(tmp_path, "--help", env=clean_env(tmp_path)).stdout.replace("│", " ").split())
    assert "Runs go to ./workspaces of the current folder (elsewhere: --workspace or $CODEDUET_WORKSPACES)" in text
    assert re.search(r"first found of \$CODEDUET_CONFIGS, \./configs/llm\.yaml, ~/\.config/codeduet/llm\.yaml, "
                     r"then the default shipped with codeduet", text), text


@pytest.mark.parametrize("where", [".env", "user folder"])
def test_the_key_comes_from_dotenv_of_the_current_or_the_user_folder(tmp_path, where):
    project = tmp_path / "project"
    write_scenario(project, model={"provider": "openai", "model": "m", "api_key_env": "CODEDUET_TEST_KEY",
                                   "base_url": "http://127.0.0.1:9/v1", "timeout": 5}, sandbox={"kind": "local"})
    env = clean_env(tmp_path)
    missing = cli(project, "run", "s.yaml", env=env)
    assert missing.returncode == 3
    assert missing.stderr.strip().startswith("error: model 'openai' needs CODEDUET_TEST_KEY: put it in .env")
    dotenv = project / ".env" if where == ".env" else tmp_path / "xdg" / "codeduet" / ".env"
    dotenv.parent.mkdir(parents=True, exist_ok=True)
    dotenv.write_text("CODEDUET_TEST_KEY=sk-test\n")
    found = cli(project, "run", "s.yaml", env=env)  # the key is there: the run goes as far as the (absent) server
    assert found.returncode == 3
    assert "cannot reach http://127.0.0.1:9/v1" in found.stderr, found.stderr
