"""`replay --resume`: continue a saved conversation with the LLM, in a new run folder linked to its parent."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from agents.feedback.workspace_view import BLOCK_FILE
from agents.loop.errors import CodeduetError, ScenarioError
from agents.loop.protocols import ExecResult
from agents.loop.roles import ADVISERS, MODEL_ROLES
from agents.record.run_folder import workspace_name
from agents.record.transcript import load_transcript
from agents.sandbox.filenames import CHECKS_DIR, holds_tests, package_of
from agents.sandbox.kernel import kernel_history

DEFAULT_MESSAGE = ("Let's continue where we stopped. Carry on with the task; "
                   "if it is already done, say so and reply TERMINATE.")
SKIP_DIRS = {CHECKS_DIR, "__pycache__"}
MAX_FILE, MAX_TOTAL = 256 * 1024, 2 * 1024 * 1024


def full_history(t: dict[str, Any], warn: Any = None) -> list[dict[str, Any]]:
    """Messages of the whole chain (parents first), as RunOptions.history items."""
    chain, seen, node = [t], {str(t.get("run_dir"))}, t
    while node.get("parent"):
        parent_dir = str((node["parent"] or {}).get("run_dir") or "")
        if not parent_dir or parent_dir in seen:
            break
        try:
            node = load_transcript(parent_dir, warn=warn)
        except CodeduetError as exc:
            if warn:
                warn(f"parent run not readable, its messages are left out: {exc}")
            break
        seen.add(parent_dir)
        chain.append(node)
    # a team's planner and QA messages are already inside the task and the reports the developer read
    return [{"role": m.get("role"), "content": m.get("content") or "", "outcome": m.get("outcome")}
            for run in reversed(chain) for m in kept_messages(run) if m.get("role") not in ADVISERS]


def kept_attempt(t: dict[str, Any]) -> int:
    """The attempt a run kept; for a run cut short (no chosen_attempt recorded) the last one it reached."""
    return t.get("chosen_attempt") or max([m.get("attempt") or 1 for m in t.get("messages") or []], default=1)


def kept_messages(t: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages of the attempt the run kept (all of them for a single-attempt run): the conversation to go on."""
    messages = t.get("messages") or []
    if len({m.get("attempt") or 1 for m in messages}) <= 1:
        return messages
    chosen = kept_attempt(t)
    return [m for m in messages if (m.get("attempt") or 1) == chosen]


def workspace_files(run_dir: Path, warn: Any = None, attempt: int | None = None,
                    binaries: dict[str, bytes] | None = None) -> dict[str, str]:
    """Text files the parent run's kept attempt left in its workspace (not its block files), to seed the new run;
    binary files within the same caps go into `binaries` when it is given."""
    root = Path(run_dir) / workspace_name(attempt or 1)
    files: dict[str, str] = {}
    total, skipped = 0, []
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        rel = path.relative_to(root)
        # a symlink may point at a host file (the sandbox planted it): never follow it from the host
        if path.is_symlink() or not path.is_file() or SKIP_DIRS & set(rel.parts) \
                or BLOCK_FILE.fullmatch(rel.as_posix()):
            continue
        try:
            size = path.stat().st_size
            data = path.read_bytes() if size <= MAX_FILE and total + size <= MAX_TOTAL else None
        except OSError:
            data = None
        text = None
        if data is not None:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                if binaries is not None:
                    binaries[rel.as_posix()] = data
                    total += size
                    continue
        if text is None:
            skipped.append(rel.as_posix())
            continue
        files[rel.as_posix()] = text
        total += size
    if skipped and warn:
        warn(f"not carried over (over {MAX_FILE // 1024} KiB each or {MAX_TOTAL // 1024 // 1024} MiB in all"
             f"{'' if binaries is not None else ', or binary'}): {', '.join(skipped[:5])}"
             + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""))
    return files


def seeded_files(recorded: dict[str, str], run_dir: Path, attempt: int, warn: Any = None,
                 binaries: dict[str, bytes] | None = None) -> dict[str, str]:
    """The parent's kept workspace over the files it started with; one it deleted stays deleted. A `files_from:`
    folder is not read again: its text files are among the recorded ones (agents/scenario/spec.py snapshot). Binary
    files of the workspace go into `binaries`."""
    root = run_dir / workspace_name(attempt)
    if root.is_dir():
        recorded = {name: text for name, text in recorded.items() if os.path.lexists(root / name)}
    return {**recorded, **workspace_files(run_dir, warn, attempt, binaries)}


def kernel_restore(t: dict[str, Any]) -> list[tuple[str, str]]:
    """The Python files the kept attempt of a kernel session ran in its kernel since it last started, in order,
    with their text: a resumed kernel session runs them first, so the conversation's variables are there again. A
    file saved twice is run as it was last saved. [] for a process session."""
    if ((t.get("scenario") or {}).get("sandbox") or {}).get("session") != "kernel":
        return []
    attempt = kept_attempt(t)
    root = Path(str(t.get("run_dir"))) / workspace_name(attempt)
    # a resumed run's kernel first ran its own parent's files (written into its first workspace): they come first
    files: list[str] = list((t.get("parent") or {}).get("kernel_files") or []) if attempt == 1 else []
    for m in t.get("messages") or []:
        if (m.get("attempt") or 1) != attempt:
            continue
        for e in (m.get("outcome") or {}).get("executions") or []:
            name = str(e.get("filename") or "")
            if (e.get("language") or "python") != "python" or not name.endswith(".py") or e.get("saved_only") \
                    or e.get("refused") or holds_tests(root, name) or package_of(root, name):
                continue  # pytest files and package modules ran as processes of their own
            files = kernel_history(files, name, ExecResult(exit_code=e.get("exit_code") or 0, duration_s=0,
                                                           output=e.get("output") or "",
                                                           timed_out=bool(e.get("timed_out"))))
    return [(name, (root / name).read_text(encoding="utf-8", errors="replace")) for name in files
            if (root / name).is_file() and not (root / name).is_symlink()]


def scenario_for_resume(t: dict[str, Any], model: str | None, warn: Any = None) -> Any:
    """The recorded scenario, seeded with the parent's workspace; a scripted model skips its used replies."""
    from agents.scenario.spec import scenario_from_data

    snap = dict(t.get("scenario") or {})
    if not snap.get("task"):
        raise ScenarioError(f"{t.get('run_dir')}: the transcript holds no scenario to resume")
    source = snap.pop("source", None)
    path = Path(source) if source and Path(source).is_file() else None
    binaries: dict[str, bytes] = {}
    snap["files"] = seeded_files(snap.get("files") or {}, Path(str(t.get("run_dir"))), kept_attempt(t), warn,
                                 binaries)
    inline = snap.get("model")
    if model is None and isinstance(inline, dict) and inline.get("provider") == "scripted":
        used = sum(1 for m in t.get("messages") or [] if m.get("role") in MODEL_ROLES) + \
            len(t.get("rejected_replies") or [])
        left = list(inline.get("replies") or [])[used:]  # none left: it answers as it did once they ran out
        snap["model"] = {**inline, "replies": left or [inline.get("when_exhausted") or "TERMINATE"]}
    scenario = scenario_from_data(snap, {}, f"{t.get('run_dir')}/transcript.json (scenario)", path)
    scenario._tree.update({name: data for name, data in binaries.items() if name not in scenario.files})
    return scenario


def resume_run(console: Console, t: dict[str, Any], *, message: str | None = None, model: str | None = None,
               max_auto_reply: int | None = None, as_json: bool = False) -> int:
    """Run the conversation on from its full history; the new run folder links to this one. as_json: no live view,
    the JSON summary line of `run --json` instead of the closing line."""
    from agents.cli.common import print_ending, run_display, warn
    from agents.loop.conversation import RunOptions, run_scenario, until_stopped
    from agents.loop.hitl import human_for_mode

    scenario = scenario_for_resume(t, model, warn)
    history = full_history(t, warn)
    run_dir = Path(str(t.get("run_dir")))
    restore = kernel_restore(t)
    parent = {"run_id": t.get("run_id"), "run_dir": str(run_dir), "status": t.get("status"),
              "messages": len(history), **({"kernel_files": [name for name, _ in restore]} if restore else {})}
    opts = RunOptions(model=model, max_auto_reply=max_auto_reply, human=t.get("human_input_mode"),
                      workspaces=run_dir.parent.parent, history=history, parent=parent,
                      first_message=message or DEFAULT_MESSAGE, kernel_restore=restore)
    if not as_json:
        console.print(f"resuming {run_dir} ({len(history)} earlier messages, status {t.get('status')})",
                      soft_wrap=True)
    started, display = time.perf_counter(), run_display(console, as_json)
    result = until_stopped(lambda: run_scenario(scenario, opts, display=display, human=human_for_mode(console)))
    return print_ending(result, console, time.perf_counter() - started, as_json, f" (continues {run_dir.name})")
