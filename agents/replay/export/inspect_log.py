"""Saved runs as one Inspect eval log (inspect-ai's own types and writer, so `inspect view` opens it): each run a
sample; its messages with their roles, each executed block a `sandbox_exec` tool call with its output, the checks as
scores (success C/I, checks and tests passed), tokens and times."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agents.loop.roles import MODEL_ROLES
from agents.replay.export.inspect_events import events
from agents.replay.export.runs import (
    attempt_messages,
    attempts_of,
    dropped,
    facts,
    last_checks,
    model_name,
    system_text,
)

TOOL = "sandbox_exec"
"""The function name every executed block is logged under (a block in the sandbox, as a tool call)."""
SCORER = "codeduet"
DROPS = ("rejected replies and candidates not chosen (only the conversation the model continued is logged); "
         "the run folder's files and figures")
"""What an Inspect export leaves out of every run (said in the output and in docs/EXPORT.md)."""
FLAGS = ("timed_out", "truncated", "oom_killed", "disk_full", "sandbox_lost")


def _time(t: dict[str, Any], key: str) -> str | None:
    return t.get(key) or None


def _seconds(t: dict[str, Any]) -> float | None:
    try:
        start = datetime.fromisoformat(str(t["started_at"]))
        return round((datetime.fromisoformat(str(t["ended_at"])) - start).total_seconds(), 3)
    except (KeyError, TypeError, ValueError):
        return (t.get("totals") or {}).get("seconds")


def tool_result(e: dict[str, Any]) -> str:
    """What a block's execution gave: exit code, flags and output."""
    flags = [f.replace("_", " ") for f in FLAGS if e.get(f)]
    flags += [f"refused: {e['refused']}"] if e.get("refused") else []
    head = f"exit code {e.get('exit_code')}" + (f" ({', '.join(flags)})" if flags else "")
    return f"{head}\n{e.get('output') or ''}".rstrip("\n")


def _tool_error(e: dict[str, Any]) -> Any:
    from inspect_ai.tool import ToolCallError

    if e.get("timed_out"):
        return ToolCallError("timeout", f"the block ran past the sandbox's time limit ({e.get('duration_s')} s)")
    if e.get("refused"):
        return ToolCallError("permission", str(e["refused"]))
    if e.get("truncated"):
        return ToolCallError("output_limit", "the output was cut at the sandbox's output limit")
    return None


def ran_blocks(reply: dict[str, Any], report: dict[str, Any]) -> list[dict[str, Any]]:
    """The reply's blocks less those the report says did not run (a language the sandbox lacks), in order."""
    skipped = list((report.get("outcome") or {}).get("not_run") or [])
    out = []
    for block in reply.get("code_blocks") or []:
        if block.get("language") in skipped:
            skipped.remove(block.get("language"))
        else:
            out.append(block)
    return out


def conversation(t: dict[str, Any], attempt: int) -> list[Any]:
    """One attempt as Inspect chat messages: system, the task and every report as user, each reply as assistant
    with a tool call per block that ran, then a tool message per execution."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall, ToolCallContent

    out: list[Any] = []
    system = system_text(t, attempt)
    if system:
        out.append(ChatMessageSystem(content=system, metadata={"attempt": attempt}))
    messages = attempt_messages(t, attempt)
    for i, m in enumerate(messages):
        meta = {k: m[k] for k in ("index", "attempt", "turn", "sender", "role", "time", "usage", "sampling")
                if m.get(k) is not None}
        content = str(m.get("content") or "")
        if m.get("role") in MODEL_ROLES:
            report = messages[i + 1] if i + 1 < len(messages) else {}
            runs = (report.get("outcome") or {}).get("executions") or [] if m.get("role") == "assistant" else []
            blocks = ran_blocks(m, report)
            calls = []
            for k, e in enumerate(runs, 1):
                args = {"language": e.get("language"), "filename": e.get("filename")}
                if len(blocks) == len(runs):
                    args["code"] = blocks[k - 1].get("code")
                if e.get("command"):
                    args["command"] = e["command"]
                shown = f"```{e.get('language') or ''}\n{args['code']}```" if args.get("code") else \
                    f"`{e.get('command') or e.get('filename')}`"
                calls.append(ToolCall(id=f"m{m.get('index')}-b{k}", function=TOOL,
                                      arguments={a: v for a, v in args.items() if v is not None},
                                      view=ToolCallContent(title=f"{TOOL} {e.get('filename') or ''}".strip(),
                                                           format="markdown", content=shown)))
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None, model=model_name(t),
                                            source="generate", metadata=meta))
            for call, e in zip(calls, runs):
                out.append(ChatMessageTool(content=tool_result(e), tool_call_id=call.id, function=TOOL,
                                           error=_tool_error(e), metadata={
                                               "attempt": attempt, "exit_code": e.get("exit_code"),
                                               "duration_s": e.get("duration_s"), "time": report.get("time")}))
        else:
            outcome = m.get("outcome") or {}
            if outcome:
                meta["outcome"] = {k: outcome[k] for k in ("kind", "success", "summary") if k in outcome}
            out.append(ChatMessageUser(content=content, metadata=meta))
    return out


def scores(t: dict[str, Any]) -> dict[str, Any]:
    """success (C/I, the checks in its explanation and metadata), checks (fraction passed), tests (when any ran)."""
    from inspect_ai.scorer import Score

    f, checks = facts(t), last_checks(t)
    lines = [f"{'PASS' if c.get('passed') else 'FAIL'} {c.get('name')}" + (f": {c['detail']}" if c.get("detail")
                                                                          else "") for c in checks]
    out = {"success": Score(value="C" if f["success"] else "I", answer=str(t.get("status")),
                            explanation="\n".join([str(t.get("reason") or ""), *lines]).strip(),
                            metadata={"status": t.get("status"), "reason": t.get("reason"), "checks": checks})}
    if checks:
        out["checks"] = Score(value=round(f["checks_passed"] / f["checks"], 4),
                              answer=f"{f['checks_passed']}/{f['checks']}")
    if f["tests"]:
        out["tests"] = Score(value=round(f["tests_passed"] / f["tests"], 4), answer=f"{f['tests_passed']}/{f['tests']}")
    return out


def check_text(check: Any) -> str:
    """A scenario's check as one line (`stdout_contains: 42`): what a sample's target shows."""
    if isinstance(check, dict) and len(check) == 1:
        key, value = next(iter(check.items()))
        return f"{key}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
    return json.dumps(check, ensure_ascii=False)


def usage(t: dict[str, Any]) -> Any:
    from inspect_ai.model import ModelUsage

    totals = t.get("totals") or {}
    p, c = int(totals.get("prompt_tokens") or 0), int(totals.get("completion_tokens") or 0)
    return ModelUsage(input_tokens=p, output_tokens=c, total_tokens=p + c)


def sample(t: dict[str, Any]) -> Any:
    """One run as an EvalSample: every attempt's conversation in order (each from its own system message)."""
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageUser, ModelOutput

    scenario = t.get("scenario") or {}
    messages = [msg for a in attempts_of(t) for msg in conversation(t, a)]
    replies = [m for m in messages if m.role == "assistant"]
    totals = t.get("totals") or {}
    working = round(sum((m.get("usage") or {}).get("seconds") or 0 for m in t.get("messages") or [])
                    + (totals.get("execution_seconds") or 0), 3)
    done = EvalSample(
        id=str(t.get("run_id")), epoch=1, input=[ChatMessageUser(content=str(scenario.get("task") or ""))],
        target=[check_text(c) for c in scenario.get("checks") or []],
        messages=messages, output=ModelOutput.from_content(model_name(t), replies[-1].text if replies else ""),
        scores=scores(t), metadata={**facts(t), "dropped": dropped(t, all_attempts=True)},
        model_usage={model_name(t): usage(t)}, started_at=_time(t, "started_at"),
        completed_at=_time(t, "ended_at"), total_time=_seconds(t), working_time=working, events=events(t, messages))
    try:  # what Inspect does before writing: a text that several events repeat is stored once, as an attachment
        from inspect_ai.log._condense import condense_sample
    except ImportError:
        return done
    return condense_sample(done)


def eval_log(runs: list[dict[str, Any]], source: str) -> Any:
    """The runs as one EvalLog (task: the scenario's name, or `codeduet` for several scenarios)."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )

    samples = [sample(t) for t in runs]
    names = sorted({str((t.get("scenario") or {}).get("name")) for t in runs})
    models = sorted({model_name(t) for t in runs})
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    solved = sum(1 for s in samples if s.scores["success"].value == "C")
    task = names[0] if len(names) == 1 else "codeduet"
    spec = EvalSpec(created=now, task=task, task_id=task, run_id=f"codeduet-export-{now}", task_version=0,
                    dataset=EvalDataset(name=Path(source).name or source, location=source, samples=len(samples),
                                        sample_ids=[s.id for s in samples]),
                    model=models[0] if len(models) == 1 else "codeduet/mixed", config=EvalConfig(),
                    solver="codeduet", metadata={"exported_by": "codeduet export", "models": models,
                                                 "scenarios": names, "dropped": DROPS})
    usage_all: dict[str, Any] = {}
    for t in runs:
        u = usage(t)
        prev = usage_all.get(model_name(t))
        usage_all[model_name(t)] = u if prev is None else prev + u
    starts = [t.get("started_at") for t in runs if t.get("started_at")]
    ends = [t.get("ended_at") for t in runs if t.get("ended_at")]
    results = EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=[
        EvalScore(name="success", scorer=SCORER, scored_samples=len(samples),
                  metrics={"accuracy": EvalMetric(name="accuracy", value=solved / len(samples))})])
    return EvalLog(status="success", eval=spec, results=results, samples=samples,
                   stats=EvalStats(started_at=min(starts) if starts else now, completed_at=max(ends) if ends else now,
                                   model_usage=usage_all))


def write_inspect(runs: list[dict[str, Any]], path: Path, source: str) -> Path:
    """Write the runs as an Inspect log (`.eval`, or `.json` by its suffix); returns its path."""
    from inspect_ai.log import write_eval_log

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(eval_log(runs, source), str(path), format="json" if path.suffix == ".json" else "eval")
    return path
