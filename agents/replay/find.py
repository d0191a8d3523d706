"""Finding saved runs: every run folder under a workspaces root, newest first, and what `replay` accepts as a run.

A run folder is <root>/<scenario>/<run id>/ holding events.jsonl (and transcript.json once it ended); its id starts
with the time it started (YYYYmmdd-HHMMSS-xxxxxx), so ids sort by time.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from agents.loop.errors import BadInputError
from agents.record.run_folder import EVENTS, TRANSCRIPT, is_run

NEWEST = re.compile(r"latest|-\d+")
"""`latest` or `-1` is the newest run, `-2` the one before it (as `llm logs -n 1`)."""


def _started(run: Path) -> tuple[str, int]:
    """Sort key: the start time in the id, then the folder's own time (two runs started in the same second)."""
    try:
        made = run.stat().st_mtime_ns
    except OSError:
        made = 0
    return run.name[:15], made


def find_runs(root: Path, scenario: str | None = None) -> list[Path]:
    """Every run folder under root (or under root/<scenario>), newest first. A run folder's own folders (its
    workspaces, its candidates) are never searched: they hold the run's files, not runs, even when the code wrote a
    file named events.jsonl there, and walking them made each call cost every file of every run."""
    base = Path(root) / scenario if scenario else Path(root)
    found = []
    for folder, dirs, files in os.walk(base):
        if EVENTS in files or TRANSCRIPT in files:
            found.append(Path(folder))
            dirs[:] = []
    return sorted(found, key=_started, reverse=True)


def resolve_run(target: str | Path, root: Path) -> Path:
    """What a person typed -> one run folder. In order: a run folder, its transcript.json or events.jsonl; a folder
    of runs (a scenario's: its newest run); `latest` / `-N`; a run id or a unique prefix of one; a scenario name."""
    text = str(target)
    path = Path(text).expanduser()
    if path.is_file() and path.name in (EVENTS, TRANSCRIPT):
        return path.parent
    if path.is_dir():
        if is_run(path):
            return path
        runs = find_runs(path)
        if not runs:
            raise BadInputError(f"{path}: no saved run in this folder (a run folder holds {EVENTS})")
        return runs[0]
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return _newest(root, _scenario_name(path), f"scenario file {path}")
    if NEWEST.fullmatch(text):
        runs = find_runs(root)
        n = 1 if text == "latest" else int(text[1:])
        if not runs or n < 1 or n > len(runs):
            raise BadInputError(f"{text}: there are {len(runs)} saved run(s) under {root}")
        return runs[n - 1]
    if "/" not in text and "\\" not in text:
        matches = [r for r in find_runs(root) if r.name.startswith(text)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            shown = ", ".join(r.name for r in matches[:4]) + (", ..." if len(matches) > 4 else "")
            raise BadInputError(f"{text}: {len(matches)} runs under {root} start with it ({shown}); "
                                "type more of the id")
        if (Path(root) / text).is_dir():
            return _newest(root, text, f"scenario {text}")
    raise BadInputError(f"{text}: no such run folder, run id or scenario under {root} (see `codeduet runs`)")


def _newest(root: Path, scenario: str, what: str) -> Path:
    runs = find_runs(root, scenario)
    if not runs:
        raise BadInputError(f"{what}: no saved run under {Path(root) / scenario}")
    return runs[0]


def _scenario_name(path: Path) -> str:
    """The run-folder name a scenario file's runs are saved under."""
    from agents.scenario.spec import load_scenario

    return load_scenario(path).name or "run"
