"""What every export format reads of saved runs: which runs (a run, a folder of runs, a scenario's runs; filtered by
status), each run's kept attempt, its developer's system message, the checks that judged it and its facts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.loop.errors import BadInputError
from agents.loop.status import STATUSES
from agents.record.run_folder import is_run
from agents.record.transcript import load_transcript
from agents.replay.find import find_runs, resolve_run


def run_folders(targets: list[str], root: Path) -> list[Path]:
    """What a person typed -> run folders, oldest first, each once. A folder holding runs (a workspaces root, a
    scenario's folder, a batch's) and a scenario's name give all their runs; anything else is one run as `replay`
    resolves it (a run folder, its transcript, a run id or prefix, latest / -N)."""
    found: list[Path] = []
    for text in targets:
        path = Path(text).expanduser()
        named = "/" not in text and (Path(root) / text).is_dir() and not any(
            r.name.startswith(text) for r in find_runs(root))
        if (path.is_dir() and not is_run(path)) or named:
            folder = path if path.is_dir() else Path(root) / text
            runs = find_runs(folder)
            if not runs:
                raise BadInputError(f"{folder}: no saved run in this folder (a run folder holds events.jsonl)")
        else:
            runs = [resolve_run(text, root)]
        found += [r.resolve() for r in runs if r.resolve() not in found]
    return sorted(found, key=lambda r: (r.name, str(r)))


def load_runs(targets: list[str], root: Path, statuses: list[str] | None = None, warn: Any = None) -> list[dict]:
    """The transcripts of the runs `targets` name, only those whose status is in `statuses` (all when empty)."""
    bad = [s for s in statuses or [] if s not in STATUSES]
    if bad:
        raise BadInputError(f"--status {bad[0]}: not a run status (one of {', '.join(STATUSES)})")
    runs = [load_transcript(r, warn=warn) for r in run_folders(targets, root)]
    kept = [t for t in runs if not statuses or t.get("status") in statuses]
    if not kept:
        raise BadInputError(f"none of the {len(runs)} run(s) has status {' or '.join(statuses or [])}")
    return kept


def kept_attempt(t: dict[str, Any]) -> int:
    """The attempt a run keeps (its result), else the last one it reached."""
    return int(t.get("chosen_attempt") or max([m.get("attempt") or 1 for m in t.get("messages") or []], default=1))


def attempts_of(t: dict[str, Any]) -> list[int]:
    """Every attempt the run's messages belong to, in order."""
    return sorted({int(m.get("attempt") or 1) for m in t.get("messages") or []}) or [1]


def attempt_messages(t: dict[str, Any], attempt: int) -> list[dict[str, Any]]:
    """The messages of one attempt (a fresh conversation), in order."""
    return [m for m in t.get("messages") or [] if int(m.get("attempt") or 1) == attempt]


def system_text(t: dict[str, Any], attempt: int) -> str | None:
    """The developer's system message in `attempt`; None for a run recorded before codeduet kept it."""
    for s in t.get("system_messages") or []:
        if int(s.get("attempt") or 1) == attempt and s.get("content"):
            return str(s["content"])
    return None


def last_checks(t: dict[str, Any], attempt: int | None = None) -> list[dict[str, Any]]:
    """The acceptance checks of the last judged turn of `attempt` (default: the kept one)."""
    attempt = attempt or kept_attempt(t)
    for m in reversed(attempt_messages(t, attempt)):
        checks = (m.get("outcome") or {}).get("checks")
        if checks:
            return list(checks)
    return []


def model_name(t: dict[str, Any]) -> str:
    """provider/model, as Inspect names a model (`scripted/scripted`, `llamacpp/qwen2.5-coder-1.5b`)."""
    model = t.get("model") or {}
    provider, name = model.get("provider") or "codeduet", model.get("model") or model.get("name") or "?"
    return name if str(name).startswith(f"{provider}/") else f"{provider}/{name}"


def facts(t: dict[str, Any]) -> dict[str, Any]:
    """A run in one flat dict, for every format's metadata: who, what, how it ended, checks, tests, tokens, time."""
    scenario = t.get("scenario") or {}
    totals = t.get("totals") or {}
    checks = last_checks(t)
    return {"run_id": t.get("run_id"), "scenario": scenario.get("name"), "status": t.get("status"),
            "reason": t.get("reason"), "success": t.get("status") == "success", "model": model_name(t),
            "attempts": totals.get("attempts") or len(attempts_of(t)), "kept_attempt": kept_attempt(t),
            "turns": totals.get("turns"), "checks_passed": sum(1 for c in checks if c.get("passed")),
            "checks": len(checks), "tests_passed": sum(c.get("tests_passed") or 0 for c in checks),
            "tests": sum(c.get("tests") or 0 for c in checks), "prompt_tokens": totals.get("prompt_tokens"),
            "completion_tokens": totals.get("completion_tokens"), "seconds": totals.get("seconds"),
            "started_at": t.get("started_at"), "ended_at": t.get("ended_at"), "prompt_version": t.get("prompt_version"),
            "run_dir": t.get("run_dir")}


def dropped(t: dict[str, Any], all_attempts: bool) -> list[str]:
    """What a conversation export of this run leaves out that the run holds (for the export's drop line)."""
    out = []
    if not all_attempts and len(attempts_of(t)) > 1:
        out.append("attempts other than the kept one")
    if t.get("rejected_replies"):
        out.append("rejected replies")
    if any(not c.get("chosen") for c in t.get("candidates") or []):
        out.append("candidates not chosen")
    if t.get("partial_reply"):
        out.append("the reply being written when the model stopped answering (partial_reply)")
    if t.get("parent"):
        out.append(f"the {(t['parent'] or {}).get('messages', 'earlier')} messages of the run it resumes "
                   f"({(t['parent'] or {}).get('run_dir', '?')}: export it too)")
    if not t.get("system_messages"):
        out.append("the system message (not recorded by the codeduet that made the run)")
    return out
