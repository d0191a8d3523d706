"""A run's timeline as Inspect events (the viewer's Transcript tab): a model event per reply (what it was asked, its
sampling, tokens and seconds) and a tool event per executed block (its output, exit code and seconds), at the times
the transcript recorded."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from agents.loop.roles import ADVISERS
from agents.replay.export.runs import model_name

TOOL_INFO = {"name": "sandbox_exec", "description": "Run a code block in codeduet's sandbox (Docker, no network) "
             "and return its exit code and output.",
             "parameters": {"type": "object", "properties": {
                 "language": {"type": "string", "description": "the block's language"},
                 "filename": {"type": "string", "description": "the file the block was saved as"},
                 "code": {"type": "string", "description": "the block"}}, "required": ["code"]}}
"""The tool every model event offers: how the sandbox looks as a tool (codeduet runs the reply's fenced blocks)."""


def _when(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except (TypeError, ValueError):
        return None


def events(t: dict[str, Any], messages: list[Any]) -> list[Any]:
    """Events for a sample's messages (inspect_log.conversation's, in order): each assistant message a ModelEvent
    whose input is every message before it in its attempt, each tool message a ToolEvent."""
    from inspect_ai.event import ModelEvent, ToolEvent
    from inspect_ai.model import ChatCompletionChoice, GenerateConfig, ModelOutput, ModelUsage
    from inspect_ai.tool import ToolInfo

    started = _when(t.get("started_at"))
    tool = ToolInfo.model_validate(TOOL_INFO)
    out: list[Any] = []
    calls: dict[str, Any] = {}
    context: list[Any] = []
    for m in messages:
        meta = m.metadata or {}
        if m.role == "system":
            context = []
        if meta.get("role") in ADVISERS:  # another member's message: the developer read it in the task
            continue                               # or the report, and it is no call of the developer's model
        if m.role == "assistant":
            usage = meta.get("usage") or {}
            seconds = float(usage.get("seconds") or 0)
            done = _when(meta.get("time"))
            sampling = meta.get("sampling") or {}
            p, c = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
            output = ModelOutput(model=model_name(t), choices=[ChatCompletionChoice(
                message=m, stop_reason="tool_calls" if m.tool_calls else "stop")],
                usage=ModelUsage(input_tokens=p, output_tokens=c, total_tokens=p + c), time=seconds)
            out.append(ModelEvent(
                model=model_name(t), input=list(context), tools=[tool], tool_choice="auto",
                config=GenerateConfig(temperature=sampling.get("temperature"), seed=sampling.get("seed")),
                output=output, timestamp=(done - timedelta(seconds=seconds)) if done else started,
                completed=done, working_time=seconds,
                working_start=_offset(started, done, seconds), metadata={"attempt": meta.get("attempt")}))
            calls.update({call.id: call for call in m.tool_calls or []})
        elif m.role == "tool" and m.tool_call_id in calls:
            call = calls[m.tool_call_id]
            done, seconds = _when(meta.get("time")), float(meta.get("duration_s") or 0)
            out.append(ToolEvent(id=call.id, function=call.function, arguments=call.arguments, view=call.view,
                                 result=m.text, error=m.error, working_time=seconds, completed=done,
                                 timestamp=(done - timedelta(seconds=seconds)) if done else started,
                                 working_start=_offset(started, done, seconds),
                                 metadata={"attempt": meta.get("attempt"), "exit_code": meta.get("exit_code")}))
        context.append(m)
    return out


def _offset(started: datetime | None, done: datetime | None, seconds: float) -> float:
    """Seconds from the run's start to the event's (Inspect's working_start)."""
    if started is None or done is None:
        return 0.0
    return max(0.0, (done - started).total_seconds() - seconds)
