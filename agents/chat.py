"""`codeduet chat`: a person types a task, the loop runs with them in it, then they type the next one."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from agents.cli_common import report_result
from agents.errors import BadInputError


def chat_command(console: Console, model: str | None, human: str, max_auto_reply: int,
                 workspace: Path | None, languages: list[str] | None = None, session: str = "kernel") -> int:
    """`codeduet chat`: the person types a task, the loop runs with them in it, and then they can type the next one;
    each task is its own run. 'exit' (or a closed stdin after a run) ends it with the last run's exit code.

    `session` is the sandbox's (kernel by default): a chat is explored step by step ("load it", "now by region",
    "plot it"), and in a kernel the follow-ups a person types into a run reuse what the earlier blocks loaded
    instead of the model resending and recomputing everything."""
    from agents.conversation import RunOptions, run_scenario, until_stopped
    from agents.display import ConsoleDisplay
    from agents.hitl import EXIT_WORDS, human_for_mode, normalize_mode, read_task
    from agents.sandbox.config import SandboxConfig
    from agents.scenario import Scenario, UserProxyConfig

    mode = normalize_mode(human) or "ALWAYS"
    code, runs = 0, 0
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
        scenario = Scenario(name="chat", description="free-form session from `codeduet chat`", task=task,
                            sandbox=SandboxConfig(session=session),
                            user_proxy=UserProxyConfig(human_input_mode=mode,
                                                       max_consecutive_auto_reply=max_auto_reply))
        opts = RunOptions(model=model, max_auto_reply=max_auto_reply, human=mode, workspaces=workspace,
                          languages=languages)
        result = until_stopped(lambda s=scenario, o=opts: run_scenario(s, o, display=ConsoleDisplay(console),
                                                                       human=human_for_mode(console)))
        code, runs = report_result(result, console), runs + 1
        if result.status == "interrupted":
            return code
        console.print("[dim]the next task starts a new run (its own folder); 'exit' ends the session[/]")
