"""The only place codeduet touches AG2's private state (ag2 0.14), each use with why no public API does the job.

Keep this module small: a new private access belongs here, with its reason, so an AG2 upgrade has one file to check.
"""

from __future__ import annotations

from typing import Any

from autogen import Agent, ConversableAgent


def auto_replies_in_a_row(agent: ConversableAgent, sender: Agent) -> int:
    """How many automatic replies `agent` has sent `sender` in a row (what AG2 compares with the reply limit).

    Why private: AG2 keeps the count in `_consecutive_auto_reply_counter` and offers no getter (only
    `max_consecutive_auto_reply(sender)` for the limit). The proxy must know, before AG2's own check ends the
    conversation, that this reply is the last one the limit allows, so that its code still runs."""
    return int(agent._consecutive_auto_reply_counter[sender])


def seed_history(assistant: ConversableAgent, proxy: ConversableAgent, history: list[dict[str, Any]]) -> None:
    """Put an earlier conversation (`--resume`) back into both agents' histories, as if it had been exchanged.

    Why private: `chat_messages` is AG2's own `_oai_messages` dict, returned as is; appending to it is the only way
    to restore messages, since `send()` would ask for replies and fire the recording hooks again. Items are
    {role: assistant|..., content} as recorded; each agent sees the other's messages as "user"."""
    for msg in history:
        by_assistant = msg.get("role") == "assistant"
        content = msg.get("content") or ""
        assistant.chat_messages[proxy].append({"content": content, "role": "assistant" if by_assistant else "user"})
        proxy.chat_messages[assistant].append({"content": content, "role": "user" if by_assistant else "assistant"})
