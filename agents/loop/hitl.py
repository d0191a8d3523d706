"""Human-in-the-loop: what a person sees and types when AG2 asks for input, and the task typed for `chat`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from agents.loop.codeblocks import extract_code_blocks
from agents.loop.errors import BadInputError
from agents.record.run_folder import clear_prompt, wait_answer, write_prompt

if TYPE_CHECKING:  # AG2 is imported only where a conversation runs; `run`'s flag checks come before it
    from agents.loop.proxy import HumanInput, SandboxProxy

MODES = {"always": "ALWAYS", "terminate": "TERMINATE", "never": "NEVER"}
EXIT_WORDS = {"exit", "quit", ":q"}
SKIP_WORDS = {"skip", "s"}
HELP = "Enter: {enter}{skip} · 'exit': end the run · anything else: sent to the assistant as your reply"
SKIP_HELP = " · 'skip': do not run the proposed code"
CLOSED = "stdin closed while waiting for human input: use --human never for unattended runs"


def normalize_mode(mode: str | None) -> str | None:
    """'always' -> 'ALWAYS'; None stays None; anything else is a one-line error."""
    if mode is None:
        return None
    if mode.lower() not in MODES:
        raise BadInputError(f"--human must be one of always|terminate|never, not '{mode}'")
    return MODES[mode.lower()]


def _last_message(proxy: SandboxProxy) -> dict[str, Any]:
    messages = next(iter(proxy.chat_messages.values()), [])
    return messages[-1] if messages else {}


def proposes_code(proxy: SandboxProxy) -> bool:
    """The assistant's last message holds a block the proxy would run."""
    return any(b.actionable for b in extract_code_blocks(_last_message(proxy).get("content")))


def enter_means(ag2_prompt: str, proxy: SandboxProxy) -> str:
    """What pressing Enter will do at this point (mirrors AG2's check_termination_and_human_reply)."""
    if "Press enter or type 'exit' to stop" in ag2_prompt:
        return "end the conversation"
    last = _last_message(proxy)
    if last and proxy.is_termination(last):
        # With ALWAYS, AG2 ignores a TERMINATE until the person presses Enter: say so.
        return "end the conversation (the assistant says it is done)"
    if proposes_code(proxy):
        return "execute the proposed code in the sandbox"
    return "send the automatic reply"


def _read_line(prompt: str = "> ", closed: str = CLOSED) -> str:
    try:
        line = input(prompt)
    except EOFError:
        raise BadInputError(closed) from None
    if not sys.stdin.isatty():  # piped input is not echoed: show it, so the log reads like the session
        print(line, flush=True)
    return line


def human_for_mode(console: Console) -> HumanInput:
    """A HumanInput reading lines from stdin (a TTY or a pipe); a closed stdin is a one-line error."""

    def ask(ag2_prompt: str, proxy: SandboxProxy) -> str:
        if proxy.display is not None:
            proxy.display.stop_live()
        code = proposes_code(proxy)
        help_line = HELP.format(enter=enter_means(ag2_prompt, proxy), skip=SKIP_HELP if code else "")
        console.print(f"[bold magenta]your turn[/] · {help_line}", highlight=False)
        while True:
            reply = _read_line().strip()
            word = reply.lower()
            if word in EXIT_WORDS:
                return "exit"
            if word in SKIP_WORDS:
                if code:
                    return "skip"
                console.print("there is no proposed code to skip: press Enter, type a reply, or 'exit'")
                continue
            if word in {"?", "help"}:
                console.print(help_line, highlight=False)
                continue
            return reply

    return ask


CHANNEL_ENV = "CODEDUET_HUMAN_CHANNEL"
"""`files`: `codeduet run` asks the person through the run folder (agents/record/run_folder.py PROMPT_FILE, ANSWER_FILE)
instead of the terminal."""


def human_via_files(poll_s: float = 0.1) -> HumanInput:
    """A HumanInput that asks through the run folder (agents/record/run_folder.py): it writes PROMPT_FILE (what Enter
    would do, the proposed code, whether skip applies) and waits for ANSWER_FILE ({"choice":
    "execute|skip|end|reply", "text": ...}), which is written whole.
    The answers mean what they mean at the terminal, and go into the conversation the same way."""
    asked = {"n": 0}

    def ask(ag2_prompt: str, proxy: SandboxProxy) -> str:
        run_dir = Path(proxy.executor.workspace).parent
        asked["n"] += 1
        n, code = asked["n"], proposes_code(proxy)
        write_prompt(run_dir, {"n": n, "enter": enter_means(ag2_prompt, proxy), "can_skip": code,
                               "proposed": _last_message(proxy).get("content") or "", "attempt": proxy.attempt})
        try:
            data = wait_answer(run_dir, n, poll_s)
        finally:
            clear_prompt(run_dir)
        choice, text = str(data.get("choice") or ""), str(data.get("text") or "").strip()
        if choice == "end":
            return "exit"
        if choice == "skip" and code:
            return "skip"
        return text if choice == "reply" and text else ""

    return ask


def read_task(console: Console) -> str:
    """The task for `chat`: one line, or several between lines of three double quotes."""
    console.print('[bold]Type the task[/] (one line; for several lines start and end with """; '
                  "'exit' to quit)")
    no_task = "stdin closed before a task was typed: `chat` reads the task from the terminal (or a pipe)"
    first = _read_line("task> ", no_task).strip()
    if first.startswith('"""'):
        lines = [first[3:]] if first[3:] else []
        while True:
            line = _read_line("... ", no_task)
            if line.rstrip().endswith('"""'):
                lines.append(line.rstrip()[:-3])
                break
            lines.append(line)
        first = "\n".join(lines).strip()
    return first
