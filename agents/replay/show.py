"""Rendering a saved run in the terminal: header, one panel per message (code highlighted), totals."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from agents.record.changes import changes_title, line_kinds, shown_diff
from agents.record.display import heading, show_message
from agents.record.run_folder import DIFF_FILE
from agents.replay.timeline import attempt_label, candidate_label, candidates_label, duration, rejected_label, timeline

DIFF_STYLE = {"add": "green", "del": "red", "hunk": "cyan", "head": "bold", "note": "yellow"}
STATUS_STYLE = {"success": "bold green", "failed": "bold red", "max_replies": "bold yellow",
                "timeout": "bold yellow", "interrupted": "bold yellow", "error": "bold red"}


def parse_time(value: str | None) -> datetime | None:
    """An ISO timestamp from a transcript, or None."""
    try:
        when = datetime.fromisoformat(value) if value else None
    except ValueError:
        return None
    # a damaged line may carry a time without its offset: read it as UTC, as codeduet writes them, so it compares
    return when.replace(tzinfo=timezone.utc) if when is not None and when.tzinfo is None else when


def message_time(message: dict[str, Any], started: datetime | None) -> str | None:
    """'08:46:30 +0.4s' (wall clock, and seconds since the run started)."""
    when = parse_time(message.get("time"))
    if when is None:
        return None
    offset = f" +{(when - started).total_seconds():.1f}s" if started else ""
    return f"{when.strftime('%H:%M:%S')}{offset}"


def model_label(t: dict[str, Any]) -> str:
    """'local (llama_cpp, qwen2.5-coder-...)'."""
    m = t.get("model") or {}
    return f"{m.get('name', '?')} ({m.get('provider', '?')}, {m.get('model', '?')})"


def sandbox_label(t: dict[str, Any]) -> str:
    """The executor kind and image ('docker <image>'), with its network when the code had one."""
    sandbox = t.get("sandbox") or {}
    network = sandbox.get("network") or "none"
    shown = f"{sandbox.get('kind', '?')} {sandbox.get('image', '')}"
    return shown + (f" · network {network}" if network != "none" else "")


def totals_label(t: dict[str, Any]) -> str:
    """One line of counts: turns, executions, failures, tokens, seconds."""
    tot = t.get("totals") or {}
    parts = [f"{tot.get('turns', 0)} turns", f"{tot.get('executions', 0)} executions",
             f"{tot.get('failed_executions', 0)} failed",
             f"{tot.get('prompt_tokens', 0)}+{tot.get('completion_tokens', 0)} tokens"]
    if tot.get("seconds") is not None:
        parts.append(duration(tot["seconds"]))
    return " · ".join(parts)


def roles_label(t: dict[str, Any]) -> str:
    """A team's members, each with its messages, tokens and generation time ('' for the pair)."""
    roles = (t.get("totals") or {}).get("roles") or {}
    return " · ".join(f"{name} ({row.get('role')}): {row.get('messages', 0)} messages, "
                      f"{row.get('prompt_tokens', 0)}+{row.get('completion_tokens', 0)} tokens, "
                      f"{duration(row.get('seconds') or 0)}" for name, row in roles.items())


def header_rows(t: dict[str, Any]) -> list[tuple[str, str]]:
    """Scenario, model, sandbox, status and totals: (name, value with markup) rows."""
    scenario = t.get("scenario") or {}
    status = t.get("status", "?")
    rows = [("scenario", f"{scenario.get('name', '?')}" + (f" — {scenario['description']}"
                                                            if scenario.get("description") else "")),
            ("model", model_label(t)),
            ("sandbox", sandbox_label(t)),
            ("human input", str(t.get("human_input_mode", "?"))),
            ("started", str(t.get("started_at", "?"))),
            ("status", f"[{STATUS_STYLE.get(status, 'bold')}]{status}[/] · {escape(str(t.get('reason', '')))}"),
            ("totals", totals_label(t)),
            ("run", str(t.get("run_dir", "?")))]
    if roles_label(t):
        rows.append(("team", roles_label(t)))
    tot = t.get("totals") or {}
    rejected = ("rejected_repeats", "rejected_cut", "rejected_no_code", "blocked_repeats")
    if (tot.get("attempts") or 1) > 1 or any(tot.get(k) for k in rejected):
        rows.append(("strategy", f"{tot.get('attempts', 1)} attempt(s), kept attempt {t.get('chosen_attempt') or 1}; "
                                 f"{tot.get('rejected_repeats', 0)} repeat(s), "
                                 f"{tot.get('rejected_cut', 0)} cut reply(ies) "
                                 f"and {tot.get('rejected_no_code', 0)} prose reply(ies) rejected and re-asked, "
                                 f"{tot.get('blocked_repeats', 0)} answered without running"))
    rows += [("warning", w) for w in t.get("warnings") or []]
    parent = t.get("parent")
    if parent:
        rows.append(("continues", f"{parent.get('run_dir', '?')} ({parent.get('messages', '?')} earlier messages)"))
    return [(key, value if key == "status" else escape(value)) for key, value in rows]


def wait_for_enter(console: Console, index: int, total: int) -> bool:
    """Block until Enter; False when the person typed q or stdin ended (then the rest is shown at once)."""
    console.print(f"[dim]message {index + 1}/{total} · Enter: next · q: show the rest[/]", end="")
    try:
        answer = input(" ")
    except EOFError:
        console.print()
        return False
    if not sys.stdin.isatty():
        console.print()
    return answer.strip().lower() not in {"q", "quit"}


def show_run(console: Console, t: dict[str, Any], step: bool = False) -> None:
    """Print the whole conversation; with step, wait for Enter between messages."""
    heading(console, "[bold]codeduet replay")
    for key, value in header_rows(t):  # one line each, never cut (a long path wraps in the terminal, whole)
        console.print(f"[bold]{key:<12}[/] {value}", soft_wrap=True)
    if t.get("recovered_from_events"):
        console.print("[yellow]recovered from events.jsonl: the transcript.json was missing or unusable[/]")
    messages = t.get("messages") or []
    started = parse_time(t.get("started_at"))
    shown = 0
    for kind, item in timeline(t):
        if kind == "attempt":
            heading(console, f"[bold]{attempt_label(item, t.get('chosen_attempt'))}", style="cyan")
            continue
        if kind == "rejected":
            console.print(f"[dim yellow]↺ {rejected_label(item)}[/]", soft_wrap=True)
            continue
        if kind == "candidates":  # one line each; their code is in the transcript and their run folders
            console.print(f"[dim cyan]⋔ {candidates_label(item)}[/]", soft_wrap=True)
            for c in item["items"]:
                console.print(f"[dim]    {candidate_label(c)}[/]", soft_wrap=True)
            continue
        if step and shown and not wait_for_enter(console, shown, len(messages)):
            step = False
        shown += 1
        show_message(console, item, time=message_time(item, started))
    partial = t.get("partial_reply")
    if partial:  # the reply the model was writing when its server went away
        console.print(Panel(Text(str(partial.get("content", ""))), border_style="yellow",
                            title="partial reply: the model's server went away while writing it"))
    show_changes(console, t)
    status = t.get("status", "?")
    heading(console, f"[{STATUS_STYLE.get(status, 'bold')}]{status}[/] · {len(messages)} messages · {totals_label(t)}")


def show_changes(console: Console, t: dict[str, Any]) -> None:
    """What the kept attempt changed (its changes.diff, coloured), under a 'changes (N files)' rule; nothing if none."""
    changed, lines, more = shown_diff(t)
    if not changed:
        return
    heading(console, f"[bold]{changes_title(changed)}", style="cyan")
    for line, kind in zip(lines, line_kinds(lines)):
        console.print(Text(line, style=DIFF_STYLE.get(kind, "")), soft_wrap=True)
    if not lines:  # the run folder lost its changes.diff: the list the transcript keeps
        for f in changed:
            console.print(Text(f"{f.get('change')} {f.get('path')}"), soft_wrap=True)
    if more:
        console.print(Text(f"… {more} more diff lines in {t.get('run_dir')}/{DIFF_FILE}", style="dim"),
                      soft_wrap=True)
