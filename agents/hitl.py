"""Human-in-the-loop: what a person sees and types when AG2 asks for input."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from agents.codeblocks import extract_code_blocks
from agents.errors import BadInputError
from agents.proxy import HumanInput

MODES = {"always": "ALWAYS", "terminate": "TERMINATE", "never": "NEVER"}


def normalize_mode(mode: str | None) -> str | None:
    """'always' -> 'ALWAYS'; None stays None; anything else is a one-line error."""
    if mode is None:
        return None
    if mode.lower() not in MODES:
        raise BadInputError(f"--human must be one of always|terminate|never, not '{mode}'")
    return MODES[mode.lower()]


def enter_means(ag2_prompt: str, proxy: Any) -> str:
    """What pressing Enter will do at this point."""
    if "Press enter or type 'exit' to stop" in ag2_prompt:
        return "end the conversation"
    messages = next(iter(proxy.chat_messages.values()), [])
    last = messages[-1].get("content") if messages else ""
    if extract_code_blocks(last):
        return "execute the proposed code in the sandbox"
    return "send the automatic reply"


def human_for_mode(console: Console) -> HumanInput:
    """A HumanInput reading lines from stdin (works with a TTY or a pipe; a closed stdin is an error)."""

    def ask(ag2_prompt: str, proxy: Any) -> str:
        console.print(f"[bold magenta]your turn[/] · Enter: {enter_means(ag2_prompt, proxy)} · "
                      "'skip': do not run the code · 'exit': end · or type feedback for the assistant")
        try:
            return input("> ").strip()
        except EOFError:
            raise BadInputError("stdin closed while waiting for human input: "
                                "use --human never for unattended runs") from None

    return ask
