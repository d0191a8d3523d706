"""Persisting a run as it happens (events.jsonl, flushed per event) and reading it back strictly."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agents.loop.errors import CodeduetError, EnvironmentProblem, TranscriptError, disk_full
from agents.loop.roles import ADVISERS, ASSISTANT, DEVELOPER, MODEL_ROLES
from agents.loop.status import STATUSES
from agents.record.run_folder import EVENTS, TRANSCRIPT, write_atomic

FORMAT = "codeduet.transcript/2"
READABLE = ("codeduet.transcript/1", FORMAT)
"""Formats this version reads: /2 added attempts and rejected repeats; a /1 transcript is one attempt."""


def now_iso() -> str:
    """UTC timestamp with milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Scrubber:
    """Replaces secret values with *** in everything written."""

    def __init__(self, secrets: list[str] | None = None):
        self.secrets = [s for s in (secrets or []) if s and len(s) >= 6]

    def add(self, secrets: list[str]) -> None:
        """More keys to scrub from now on (a team role's own hosted model)."""
        self.secrets += [s for s in secrets if s and len(s) >= 6 and s not in self.secrets]

    def __call__(self, obj: Any) -> Any:
        if not self.secrets:
            return obj
        if isinstance(obj, str):
            for s in self.secrets:
                obj = obj.replace(s, "***")
            return obj
        if isinstance(obj, dict):
            return {k: self(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self(v) for v in obj]
        return obj


class JsonlRecorder:
    """Appends each event to events.jsonl (flush + fsync) and writes transcript.json at the end."""

    def __init__(self, run_dir: Path, header: dict[str, Any], secrets: list[str] | None = None):
        self.run_dir = Path(run_dir)
        self.scrub = Scrubber(secrets)
        self.header = {"format": FORMAT, **header, "started_at": now_iso()}
        self.messages: list[dict[str, Any]] = []
        self.attempts: list[dict[str, Any]] = []
        self.rejected: list[dict[str, Any]] = []
        self.candidates: list[dict[str, Any]] = []
        self.system_messages: list[dict[str, Any]] = []
        """Each attempt's system message to the developer ({attempt, sender, content}): what an export starts from."""
        self.partial_reply: dict[str, Any] | None = None
        """The reply the model was writing when its server went away (ModelUnavailable.partial)."""
        self.started = time.perf_counter()
        self.failed: CodeduetError | None = None
        """Why an event could not be written (a full disk): nothing is appended after it, so the log stays whole."""
        self._fd: int | None = os.open(self.run_dir / EVENTS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._write({"type": "start", **self.header})

    def _write(self, event: dict[str, Any], last: bool = False) -> None:
        """Append one event as one whole line (flushed and fsynced), or nothing: a write the disk cuts short is
        taken back, and the run stops with one line. After that, only the `last` one (the end) is tried."""
        if self.failed is not None and not last:
            raise self.failed
        if self._fd is None:
            return
        line = (json.dumps(self.scrub(event), ensure_ascii=False) + "\n").encode("utf-8")
        try:
            append_line(self._fd, line)
        except OSError as exc:
            path = self.run_dir / EVENTS
            self.failed = self.failed or disk_full(exc, self.run_dir) or EnvironmentProblem(
                f"cannot append to {path} ({exc.strerror or exc}): every event before this one is kept; fix the "
                "disk and re-run")
            raise self.failed from None

    def event(self, kind: str, /, **data: Any) -> None:
        """Append one event; `message` events also become transcript messages."""
        if kind == "message":
            data = {"index": len(self.messages), "time": now_iso(), **data}
            self.messages.append(data)
        elif kind == "attempt":
            self.attempts.append(data)
        elif kind == "partial_reply":
            self.partial_reply = data
        elif kind == "system":
            self.system_messages.append(data)
        elif kind in ("reply_rejected", "candidate"):
            data = {"time": now_iso(), "before_message": len(self.messages), **data}
            (self.rejected if kind == "reply_rejected" else self.candidates).append(data)
        self._write({"type": kind, **data})

    def totals(self) -> dict[str, Any]:
        """Counts and sums over the messages so far."""
        return compute_totals(self.messages, time.perf_counter() - self.started, self.rejected, self.attempts,
                              self.candidates)

    def finish(self, status: str, reason: str, **extra: Any) -> Path:
        """Write the end event and transcript.json (atomically); return its path."""
        totals = self.totals()
        ended = now_iso()
        if self._fd is not None:
            try:  # after a lost event too: the end says why the log stops there, if the disk takes it
                self._write({"type": "end", "status": status, "reason": reason, "ended_at": ended,
                             "totals": totals, **extra}, last=True)
            except CodeduetError:  # kept in self.failed: the log ends at its last whole event
                pass
            os.close(self._fd)
            self._fd = None
        transcript = {**self.header, "ended_at": ended, "status": status, "reason": reason, **extra,
                      "attempts": self.attempts, "rejected_replies": self.rejected, "candidates": self.candidates,
                      "system_messages": self.system_messages, "messages": self.messages, "totals": totals,
                      **({"partial_reply": self.partial_reply} if self.partial_reply else {})}
        path = self.run_dir / TRANSCRIPT
        try:
            write_atomic(path, json.dumps(self.scrub(transcript), indent=2, ensure_ascii=False))
        except OSError as exc:  # replay rebuilds the transcript from events.jsonl
            self.failed = self.failed or disk_full(exc, self.run_dir) or EnvironmentProblem(
                f"cannot write {path} ({exc.strerror or exc}); replay reads the run from its events.jsonl")
        return path


def append_line(fd: int, data: bytes) -> None:
    """Append data to fd and fsync it; if any of it fails, the file is cut back to its size before (O_APPEND: one
    writer per file, the recorder)."""
    size = os.fstat(fd).st_size
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError:
        try:
            os.ftruncate(fd, size)
        except OSError:
            pass
        raise


def role_totals(messages: list[dict[str, Any]], rejected: list[dict[str, Any]],
                candidates: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per member of a team (by the name it speaks under): messages, tokens and seconds of generation; the
    developer's rejected samples and unchosen candidates count as its own."""
    out: dict[str, dict[str, Any]] = {}
    spoken = [m for m in messages if m.get("role") in MODEL_ROLES]
    developer = next((m.get("sender") for m in spoken if m.get("role") == ASSISTANT), DEVELOPER.name)
    extra = [*rejected, *(c for c in candidates if not c.get("chosen"))]
    for name, item, counted in [*((str(m.get("sender") or developer), m, 1) for m in spoken),
                                *((developer, e, 0) for e in extra)]:
        usage = item.get("usage") or {}
        row = out.setdefault(name, {"role": DEVELOPER.name if name == developer else item.get("role"), "messages": 0,
                                    "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0})
        row["messages"] += counted
        row["prompt_tokens"] += usage.get("prompt_tokens") or 0
        row["completion_tokens"] += usage.get("completion_tokens") or 0
        row["seconds"] = round(row["seconds"] + (usage.get("seconds") or 0), 3)
    return out


def compute_totals(messages: list[dict[str, Any]], seconds: float | None = None,
                   rejected: list[dict[str, Any]] | None = None,
                   attempts: list[dict[str, Any]] | None = None,
                   candidates: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Turns, executions, failures, attempts, rejected repeats, candidates and tokens (rejected samples and the
    candidates not chosen included; the chosen one's usage is its message's)."""
    rejected = rejected or []
    candidates = candidates or []
    execs = [e for m in messages for e in (m.get("outcome") or {}).get("executions", [])]
    usage = [m.get("usage") or {} for m in [*messages, *rejected, *(c for c in candidates if not c.get("chosen"))]]
    totals = {
        "messages": len(messages),
        "turns": sum(1 for m in messages if m.get("role") == "assistant"),
        "executions": len(execs),
        "failed_executions": sum(1 for e in execs if e.get("exit_code") != 0 and not e.get("usage")),
        "prompt_tokens": sum(u.get("prompt_tokens") or 0 for u in usage),
        "completion_tokens": sum(u.get("completion_tokens") or 0 for u in usage),
        "execution_seconds": round(sum(e.get("duration_s") or 0 for e in execs), 3),
        "attempts": max(len(attempts or []), max([m.get("attempt") or 1 for m in messages], default=1)),
        "rejected_repeats": sum(1 for r in rejected if r.get("reason", "repeat") == "repeat"),
        "rejected_cut": sum(1 for r in rejected if r.get("reason") == "cut"),
        "rejected_no_code": sum(1 for r in rejected if r.get("reason") == "no_code"),
        "blocked_repeats": sum(1 for m in messages if (m.get("outcome") or {}).get("kind") == "repeat"),
        "salvaged_replies": sum(1 for u in usage if ((u.get("extra") or {}).get("loop") or {}).get("salvaged")),
        "refused_files": sum(1 for e in execs if e.get("refused")),
        "saved_files": sum(1 for m in messages for _ in (m.get("outcome") or {}).get("written") or []),
    }
    speakers = {m.get("sender") for m in messages if m.get("role") in ADVISERS}
    if speakers:  # a team: tokens and time of each member (the developer's messages are its turns)
        totals["roles"] = role_totals(messages, rejected, candidates)
    if candidates:
        totals["candidates"] = len(candidates)
        totals["candidates_run"] = sum(1 for c in candidates if c.get("outcome"))
    if seconds is not None:
        totals["seconds"] = round(seconds, 3)
    return totals


def _from_events(path: Path) -> dict[str, Any]:
    header: dict[str, Any] | None = None
    messages, end = [], None
    attempts: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    candidates: list[dict[str, Any]] = []
    systems: list[dict[str, Any]] = []
    skipped: list[int] = []
    partial: dict[str, Any] | None = None
    end_line = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                event = None
            if not isinstance(event, dict) or not well_formed(event):  # cut by kill -9, or damaged: the others
                skipped.append(n)                                       # are intact
                continue
            kind = event.pop("type", None)
            if kind == "start":
                header = event
            elif kind == "message":
                messages.append(event)
            elif kind == "attempt":
                attempts.append(event)
            elif kind == "reply_rejected":
                rejected.append(event)
            elif kind == "candidate":
                candidates.append(event)
            elif kind == "partial_reply":
                partial = event
            elif kind == "system":
                systems.append(event)
            elif kind == "end":
                end, end_line = event, n
    if header is None:
        raise TranscriptError(f"{path}: not a codeduet event log (no start event)")
    if end is not None and (end.get("status") not in STATUSES or not isinstance(end.get("totals"), dict)):
        skipped.append(end_line)  # an end line damaged into other valid JSON: the run's end is unknown
        end = None
    status = end["status"] if end else "interrupted"
    reason = str(end.get("reason") or "?") if end else \
        "the process ended before the run finished (recovered from events.jsonl)"
    return {**header, "status": status, "reason": reason, "ended_at": (end or {}).get("ended_at"),
            "chosen_attempt": (end or {}).get("chosen_attempt") or _reached(attempts, messages),
            "attempts": attempts, "rejected_replies": rejected, "candidates": candidates, "system_messages": systems,
            "messages": messages, "totals": (end or {}).get("totals") or compute_totals(messages, None, rejected,
                                                                                        attempts, candidates),
            "changed_files": (end or {}).get("changed_files") or [], "recovered_from_events": True,
            "skipped_event_lines": skipped, **({"partial_reply": partial} if partial else {})}


Shape = dict[str, Any]
NUMBER = (int, float)
USAGE: Shape = {"prompt_tokens": int, "completion_tokens": int, "cached_tokens": int, "seconds": NUMBER,
                "first_token_s": NUMBER, "extra": dict}
EXECUTION: Shape = {"exit_code": int, "output": str, "duration_s": NUMBER, "filename": str, "language": str,
                    "refused": str, "files": [dict], "timed_out": bool, "truncated": bool, "oom_killed": bool,
                    "disk_full": bool, "sandbox_lost": str, "saved_only": bool, "usage": bool}
OUTCOME: Shape = {"kind": str, "summary": str, "success": bool, "executions": [EXECUTION],
                  "checks": [{"name": str, "passed": bool, "detail": str, "figures": [dict]}], "files": [dict],
                  "written": [str]}
EVENT: Shape = {
    "format": str, "run_id": str, "run_dir": str, "scenario": dict, "started_at": str, "ended_at": str,
    "warnings": list, "index": int, "attempt": int, "turn": int, "role": str, "content": str, "sender": str,
    "recipient": str, "time": str, "status": str, "reason": str, "success": bool, "summary": str,
    "before_message": int, "follow_up": str, "chosen": bool, "deferred": int, "budget_spent": bool,
    "chosen_attempt": int,
    "changed_files": [dict], "totals": dict, "usage": USAGE, "outcome": OUTCOME,
    "code_blocks": [{"language": str, "code": str}]}
"""What the readers (totals, show, html, the UI) expect of the keys they use; null is allowed for each. A line
damaged into other valid JSON that breaks this is skipped like an unreadable one."""


def well_formed(value: Any, shape: Any = EVENT) -> bool:
    """Whether value has the shape: a type, a tuple of types, [item shape] for a list, {key: shape} for a dict
    (unknown keys are free)."""
    if value is None:
        return True
    if isinstance(shape, dict):
        return isinstance(value, dict) and all(well_formed(v, shape[k]) for k, v in value.items() if k in shape)
    if isinstance(shape, list):
        return isinstance(value, list) and all(well_formed(v, shape[0]) for v in value)
    return isinstance(value, shape)


def _reached(attempts: list[dict[str, Any]], messages: list[dict[str, Any]]) -> int | None:
    """For a run cut short: its first successful attempt, else the last attempt it reached (None: single attempt)."""
    done = next((a["attempt"] for a in attempts if a.get("success")), None)
    last = max([m.get("attempt") or 1 for m in messages], default=1)
    return done or (last if last > 1 or attempts else None)


def load_transcript(target: str | Path, warn: Any = None) -> dict[str, Any]:
    """Read a run folder or a transcript.json; fall back to events.jsonl when the transcript is unusable."""
    target = Path(target)
    run_dir = target if target.is_dir() else target.parent
    tpath = target if target.is_file() else run_dir / TRANSCRIPT
    epath = run_dir / EVENTS
    problem = None
    if tpath.is_file():
        try:
            data = json.loads(tpath.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("format") not in READABLE:
                fmt = data.get("format") if isinstance(data, dict) else None
                problem = f"{tpath}: format {fmt!r} is not {FORMAT!r}: {_format_hint(fmt)}"
            else:
                _here(data, run_dir)
                return data
        except (json.JSONDecodeError, UnicodeDecodeError):
            problem = f"{tpath}: not valid JSON (truncated?)"
    elif not target.exists():
        raise TranscriptError(f"{target}: no such run folder or transcript")
    if epath.is_file() and (tpath == target or target.is_dir() or problem):
        try:
            data = _from_events(epath)
        except TranscriptError:
            data = None
        if data is not None and data.get("format") in READABLE:
            if warn:
                skipped = data.get("skipped_event_lines") or []
                bad = f" (skipped unreadable line{'s' if len(skipped) > 1 else ''} " \
                      f"{', '.join(map(str, skipped))})" if skipped else ""
                warn(f"{problem or f'{tpath}: missing'}; recovered {len(data['messages'])} messages from "
                     f"{epath}{bad}")
            _here(data, run_dir)
            return data
    if problem and problem.endswith("(truncated?)"):
        problem += " and there is no events.jsonl to recover from: re-run the scenario"
    raise TranscriptError(problem or f"{target}: neither a transcript.json nor an events.jsonl of format {FORMAT}")


def _here(data: dict[str, Any], run_dir: Path) -> None:
    """A run folder is where it was loaded from: a moved folder (e.g. one a Ray node sent back) keeps working."""
    recorded = data.get("run_dir")
    if not recorded:
        data["run_dir"] = str(run_dir)
    elif Path(recorded).resolve() != run_dir.resolve():
        data["recorded_run_dir"], data["run_dir"] = recorded, str(run_dir.resolve())


def _format_hint(fmt: Any) -> str:
    """What to do about a transcript of another format."""
    prefix, _, version = str(fmt).rpartition("/")
    if prefix == FORMAT.rpartition("/")[0] and version.isdigit():
        newer = int(version) > int(FORMAT.rpartition("/")[2])
        return "it was written by a newer codeduet; upgrade codeduet to read it" if newer else \
            "it was written by an older codeduet; read it with that version"
    return "not a codeduet transcript"
