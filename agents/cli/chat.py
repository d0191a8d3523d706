"""`codeduet chat`: a person types a task, the loop runs with them in it, then they type the next one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from agents.cli.common import report_result
from agents.loop.errors import BadInputError


def chat_command(console: Console, model: str | None, human: str, max_auto_reply: int,
                 workspace: Path | None, languages: list[str] | None = None, session: str = "",
                 preset: str = "", checks: list[dict[str, Any]] | None = None) -> int:
    """`codeduet chat`: the person types a task, the loop runs with them in it, and then they can type the next one;
    each task is its own run. 'exit' (or a closed stdin after a run) ends it with the last run's exit code.

    `session` is the sandbox's (kernel by default): a chat is explored step by step ("load it", "now by region",
    "plot it"), and in a kernel the follow-ups a person types into a run reuse what the earlier blocks loaded
    instead of the model resending and recomputing everything.

    `preset` (backend, frontend, web) picks the image a web task needs; `checks` (agents/scenario/task_spec.py) are
    every
    task's acceptance checks: with them, the checks decide success, not the model's word."""
    from agents.loop.conversation import RunOptions, run_scenario, until_stopped
    from agents.loop.hitl import EXIT_WORDS, human_for_mode, normalize_mode, read_task
    from agents.record.display import ConsoleDisplay
    from agents.scenario.spec import scenario_from_data
    from agents.scenario.task_spec import describe_checks, sandbox_block

    mode = normalize_mode(human) or "ALWAYS"
    code, runs = 0, 0
    if checks:
        console.print(f"[dim]every task is checked by: {describe_checks(checks)}[/]")
    while True:
        try:
            task = read_task(console)
            while not task:
                console.print("the task is empty: type what the assistant should do, or 'exit'")
                task = read_task(console)
        except BadInputError:
            if runs:  # stdin closed at the next task prompt: the session is over
                return code
            raise
        if task.lower() in EXIT_WORDS:
            return code
        data = {"name": "chat", "description": "free-form session from `codeduet chat`", "task": task,
                "sandbox": sandbox_block(languages or (), preset, session, checks), "checks": checks or [],
                "user_proxy": {"human_input_mode": mode, "max_consecutive_auto_reply": max_auto_reply}}
        scenario = scenario_from_data(data, {}, "codeduet chat", None)  # a bad check is one line, as in a file
        opts = RunOptions(model=model, max_auto_reply=max_auto_reply, human=mode, workspaces=workspace,
                          languages=languages)
        result = until_stopped(lambda s=scenario, o=opts: run_scenario(s, o, display=ConsoleDisplay(console),
                                                                       human=human_for_mode(console)))
        code, runs = report_result(result, console), runs + 1
        if result.status == "interrupted":
            return code
        console.print("[dim]the next task starts a new run (its own folder); 'exit' ends the session[/]")
