"""A task typed into `codeduet ui`: the form's fields become a scenario (validated as any scenario file is), written
as YAML where the run can find it; the run copies it into its folder (`scenario.yaml`, agents/record/run_folder.py
KEEP_SCENARIO_ENV), so it can be replayed and run again from the command line:
`codeduet run workspaces/typed/<run>/scenario.yaml`."""

from __future__ import annotations

import secrets
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from agents.loop.errors import BadInputError
from agents.loop.roles import ROLE_NAMES
from agents.scenario.spec import scenario_from_data
from agents.scenario.task_spec import command_list, quick_checks, sandbox_block

NAME = "typed"
"""The scenario name of typed tasks: their runs are under workspaces/typed/."""
TYPED_DIR = ".typed"
"""Under the workspaces root: the scenarios of typed tasks, one file each."""
FILE_MAX = 1 << 20
SETUPS = {"pair": None, "team": list(ROLE_NAMES)}
TYPED_FIELDS = ("task", "model", "setup", "session", "attempts", "max_seconds", "languages", "preset", "expect_output",
                "check_commands", "server", "port", "requests")
"""The task box's fields (agents/ui/templates/new.html), besides its files and who steers."""
PRESET_CHOICES = [("backend", "Flask, FastAPI, express, Go's net/http"),
                  ("frontend", "pages checked in a headless browser, jsdom, React"),
                  ("web", "backend and frontend")]
"""The task box's preset menu: each preset of agents/sandbox/presets.py, said in a few words."""


async def uploaded_files(form: Any) -> dict[str, str]:
    """The form's uploaded files as {name: text}: text files of at most FILE_MAX bytes, plain names only."""
    files: dict[str, str] = {}
    for upload in form.getlist("files"):
        name = Path(str(getattr(upload, "filename", "") or "")).name
        if not name:
            continue
        data = await upload.read()
        if len(data) > FILE_MAX:
            raise BadInputError(f"{name} is {len(data)} bytes: a file given with a task is at most {FILE_MAX} bytes")
        try:
            files[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BadInputError(f"{name} is not a UTF-8 text file: give text files (CSV, JSON, code, ...)") from None
    return files


def typed_scenario(fields: dict[str, str], files: dict[str, str], models: list[str]) -> dict[str, Any]:
    """The scenario a typed task makes (BadInputError for a field a person must fix)."""
    task = fields.get("task", "").strip()
    if not task:
        raise BadInputError("type a task")
    model, setup = fields.get("model", ""), fields.get("setup", "pair")
    if model and model not in models:
        raise BadInputError(f"model {model!r} is not in the model table")
    if setup not in SETUPS:
        raise BadInputError("the setup is pair or team")
    strategy: dict[str, Any] = {}
    for key, field in (("attempts", "attempts"), ("max_seconds", "max_seconds")):
        value = fields.get(field, "").strip()
        if value:
            if not value.isdigit() or int(value) < 1:
                raise BadInputError(f"{field.replace('_', ' ')} is a whole number of at least 1")
            strategy[key] = int(value)
    checks = quick_checks(fields.get("expect_output", ""), command_list(fields.get("check_commands", "")),
                          fields.get("server", ""), fields.get("port", ""),
                          fields.get("requests", "").splitlines())
    sandbox = sandbox_block(fields.get("languages", ""), fields.get("preset", ""), fields.get("session", ""), checks)
    data: dict[str, Any] = {"name": NAME, "description": "a task typed into codeduet ui", "task": task,
                            "sandbox": sandbox}
    if checks:
        data["checks"] = checks
    if model:
        data["model"] = model
    if SETUPS[setup]:
        data["team"] = SETUPS[setup]
    if strategy:
        data["strategy"] = strategy
    if files:
        data["files"] = files
    return data


def write_typed(root: Path, data: dict[str, Any]) -> Path:
    """Validate the scenario and write it under root/.typed/; its path."""
    folder = root / TYPED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(3)}.yaml"
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    scenario_from_data(yaml.safe_load(text), {}, str(path), path)  # a ScenarioError names what to fix
    path.write_text(text, encoding="utf-8")
    return path


