"""Saved runs as a plain folder of their final code: each run's kept workspace copied to <out>/<scenario>/<run id>/
with codeduet-run.json beside it (how the run ended, its checks, model, tokens), for an editor, a diff or a CI job
that knows nothing of codeduet."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agents.record.run_folder import workspace_name
from agents.replay.export.runs import facts, kept_attempt, last_checks

FACTS_FILE = "codeduet-run.json"
"""Beside each run's code: facts() of the run with its last checks."""
DROPS = "the conversation (transcript.json stays in the run folder), the workspaces of other attempts, candidates"
"""What a files export leaves out of every run."""


def write_files(runs: list[dict[str, Any]], out: Path) -> Path:
    """Copy each run's kept workspace (symbolic links kept as links, never followed); returns the folder."""
    out = Path(out)
    for t in runs:
        target = out / str((t.get("scenario") or {}).get("name") or "run") / str(t.get("run_id"))
        source = Path(str(t.get("run_dir"))) / workspace_name(kept_attempt(t))
        if target.exists():
            shutil.rmtree(target)
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        target.mkdir(parents=True, exist_ok=True)
        record = {**facts(t), "checks_detail": last_checks(t), "workspace": source.name if source.is_dir() else None}
        (target / FACTS_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out
