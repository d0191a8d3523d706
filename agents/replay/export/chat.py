"""Saved runs as chat-format JSONL, the form fine-tuning tools take (OpenAI's chat fine-tuning format, TRL's
`messages` column): one conversation a line, the kept attempt's, the execution reports as the user's messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.loop.roles import ADVISERS
from agents.replay.export.runs import attempt_messages, dropped, facts, kept_attempt, system_text

DROPS = ("attempts other than the kept one, a team's planner and QA messages as such (the developer read them in the "
         "task and the reports), rejected replies, candidates not chosen, what came after the last "
         "reply (the report that ended the run: its status is in metadata), tool calls as such (a block and its "
         "output are the reply's and the report's text, as the model saw them)")
"""What a chat export leaves out of every run (said in the output and in docs/EXPORT.md)."""


def chat_record(t: dict[str, Any]) -> dict[str, Any]:
    """One run: {"messages": [system, user, assistant, user, ...], "metadata": {...}}. A role's consecutive
    messages (the task and a team's plan) are one message, so user and assistant alternate as chat templates ask."""
    attempt = kept_attempt(t)
    messages: list[dict[str, str]] = []
    system = system_text(t, attempt)
    if system:
        messages.append({"role": "system", "content": system})
    for m in attempt_messages(t, attempt):
        # a team's other members are not the developer's conversation (agents/loop/team.py puts the plan into the
        # task and QA's report into the execution report the developer reads)
        if m.get("role") in ADVISERS:
            continue
        role = "assistant" if m.get("role") == "assistant" else "user"
        content = str(m.get("content") or "")
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"] += "\n\n" + content
        else:
            messages.append({"role": role, "content": content})
    while messages and messages[-1]["role"] != "assistant":  # nothing to learn from after the last reply
        messages.pop()
    return {"messages": messages, "metadata": {**facts(t), "dropped": dropped(t, all_attempts=False)}}


def write_chat(runs: list[dict[str, Any]], path: Path) -> Path:
    """Write one line per run that has a reply; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [r for r in map(chat_record, runs) if r["messages"]]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path
