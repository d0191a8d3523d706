"""A scenario as data: its YAML and the pytest files its checks name, shipped to a node that lacks the caller's
files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agents.scenario.checks import PytestCheck
from agents.scenario.project_files import as_text
from agents.scenario.spec import Scenario


def ship_scenario(scenario: Scenario) -> dict[str, Any]:
    """{"scenario": relative YAML name, "files": {relative name: text}}, laid out as on the caller's disk."""
    assert scenario.path is not None, "only a scenario loaded from a file can be shipped"
    sources = [Path(scenario.path).resolve()]
    sources += [(scenario.base_dir / c.pytest).resolve() for c in scenario.checks if isinstance(c, PytestCheck)]
    tree = (scenario.base_dir / scenario.files_from).resolve() if isinstance(scenario.files_from, str) else None
    base = Path(os.path.commonpath([str(p.parent) for p in sources] + ([str(tree)] if tree else [])))
    files = {p.relative_to(base).as_posix(): p.read_text(encoding="utf-8") for p in sources}
    if tree is not None:  # the `files_from:` folder as it was read (text files; a binary file cannot travel here)
        texts = {name: as_text(content) for name, content in scenario.starting_files().items()
                 if name not in scenario.files}
        files.update({(tree / name).relative_to(base).as_posix(): text for name, text in texts.items() if text})
    return {"scenario": sources[0].relative_to(base).as_posix(), "files": files}


def land_scenario(payload: dict[str, Any], folder: Path) -> Path:
    """Write a shipped scenario under the fresh folder `folder` and return its YAML path."""
    for name, text in payload["files"].items():
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ValueError(f"shipped scenario file {name!r} is not a relative path")
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder / payload["scenario"]
