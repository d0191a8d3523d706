"""The run folder as one contract: its layout, and every file the CLI, the web UI and the HITL path exchange.

```
<root>/<scenario>/<YYYYmmdd-HHMMSS>-<shortid>/
  events.jsonl          EVENTS: appended and fsynced per event by agents/record/transcript.py (whole lines read)
  transcript.json       TRANSCRIPT: written once at the end, atomically
  changes.diff          DIFF_FILE: the kept attempt's changes (agents/record/changes.py), atomically
  workspace/, workspace-2/, ...          workspace_name(attempt)
  candidates/a1-t1-c2/                   candidate_dir(attempt, turn, index)
  human_prompt.json     PROMPT_FILE: what a person is asked (agents/loop/hitl.py human_via_files), atomically
  human_answer-N.json   answer_file(n): the answer to prompt N, created once and whole (the UI: write_answer)
  .live_reply.txt       LIVE_FILE: the reply being generated, appended token by token (agents/record/display.py)
```

A file another process reads whole is written to a temporary file in the same folder and renamed over its name
(write_atomic), so a reader sees it complete or not at all; events.jsonl and the live reply are appended instead.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from datetime import datetime
from pathlib import Path
from typing import Any

EVENTS = "events.jsonl"
TRANSCRIPT = "transcript.json"
DIFF_FILE = "changes.diff"
CANDIDATES_DIR = "candidates"
"""Under the run folder: one workspace per candidate that ran (`a1-t1-c2/`), kept for replay and comparison."""
PROMPT_FILE = "human_prompt.json"
"""In a run folder while a person is asked through files (`codeduet ui`): what is asked, and its number."""
ANSWER_FILE = "human_answer-{n}.json"
"""The answer to prompt n; created once, whole, by whoever answers first (write_answer)."""
LIVE_FILE = ".live_reply.txt"
"""The reply being generated, token by token, for a page following the run; gone once the message is complete."""
CONTAINER_PREFIX = "codeduet-"


def new_run_dir(root: Path, scenario_name: str) -> tuple[Path, str]:
    """Create workspaces/<scenario>/<YYYYmmdd-HHMMSS>-<shortid>/ (unique even for simultaneous runs)."""
    while True:
        run_id = f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        run_dir = Path(root) / scenario_name / run_id
        try:
            run_dir.mkdir(parents=True, exist_ok=False)
            return run_dir, run_id
        except FileExistsError:
            continue


def is_run(path: Path) -> bool:
    """Whether a folder is one run's folder (it holds events.jsonl or transcript.json)."""
    return (path / EVENTS).is_file() or (path / TRANSCRIPT).is_file()


def workspace_name(attempt: int) -> str:
    """workspace/ for the first attempt (the layout of single-attempt runs), workspace-N/ after it."""
    return "workspace" if attempt == 1 else f"workspace-{attempt}"


def sandbox_id(run_id: str, attempt: int) -> str:
    """The id of an attempt's sandbox: the run id for the first, `<run-id>-a2` after it."""
    return run_id if attempt == 1 else f"{run_id}-a{attempt}"


def candidate_name(attempt: int, turn: int, index: int, resample: int = 0) -> str:
    """A candidate's name (`a1-t1-c2`, `a1-t3-r1-c2` among a re-ask's): its folder under candidates/ and the tail
    of its sandbox's id."""
    return f"a{attempt}-t{turn}-" + (f"r{resample}-" if resample else "") + f"c{index}"


def container_name(sandbox: str) -> str:
    """The Docker container of a sandbox id (`codeduet-<run-id>`)."""
    return f"{CONTAINER_PREFIX}{sandbox}"


def answer_file(n: int | str) -> str:
    """The name of the answer to prompt n."""
    return ANSWER_FILE.format(n=n)


def write_atomic(path: Path, text: str) -> None:
    """Write a file another process reads: a temporary file in the same folder renamed over `path`, so a reader
    sees the old file, or none, or the new one whole. On an error nothing is left behind and the error is raised."""
    tmp = _temp(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def create_atomic(path: Path, text: str) -> bool:
    """Create `path` whole and only once (a hard link of a temporary file: atomic and exclusive); False when it
    already exists (someone else created it first)."""
    tmp = _temp(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)


def _temp(path: Path) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")


def write_prompt(run_dir: Path, prompt: dict[str, Any]) -> None:
    """Ask a person through the run folder: PROMPT_FILE, whole."""
    write_atomic(Path(run_dir) / PROMPT_FILE, json.dumps(prompt))


def clear_prompt(run_dir: Path) -> None:
    """No one is asked any more."""
    (Path(run_dir) / PROMPT_FILE).unlink(missing_ok=True)


def write_answer(run_dir: Path, n: int | str, answer: dict[str, Any]) -> bool:
    """Answer prompt n ({"choice": ..., "text": ...}); False when it was already answered (the first answer wins)."""
    return create_atomic(Path(run_dir) / answer_file(n), json.dumps(answer))


def wait_answer(run_dir: Path, n: int, poll_s: float = 0.1) -> dict[str, Any]:
    """The answer to prompt n, once it exists (it is written whole: write_answer)."""
    path = Path(run_dir) / answer_file(n)
    while True:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            time.sleep(poll_s)
            continue
        return json.loads(text or "{}")


SCENARIO_FILE = "scenario.yaml"
"""A copy of the scenario file a run ran, kept in its folder when KEEP_SCENARIO_ENV is set (a task typed into the
page: `codeduet run <run folder>/scenario.yaml` runs it again)."""
KEEP_SCENARIO_ENV = "CODEDUET_KEEP_SCENARIO"
