"""The only place codeduet touches AG2's internals (ag2 0.14): its private state, each use with why no public API
does the job, and every hook codeduet installs into AG2's agents (reply functions, the before-send hook, the output
stream). The decisions those hooks carry out are agents/loop/turn_policy.py's.

Keep this module small: a new private access or hook belongs here, so an AG2 upgrade has one file to check.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from autogen import Agent, ConversableAgent
from autogen.io.base import IOStream

Generate = Callable[..., tuple[bool, Any]]
"""generate(messages, **sampling) -> AG2's (ok, reply) from the agent's model client."""


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


def install_assistant_reply(assistant: ConversableAgent,
                            reply: Callable[[list[dict[str, Any]], Generate], tuple[bool, Any]]) -> None:
    """The assistant's model reply becomes reply(history, generate): the turn policy decides how often to ask
    (`generate` is AG2's own generate_oai_reply, through the provider's model client) and what to keep."""

    def ag2_reply(agent: ConversableAgent, messages: list[dict[str, Any]] | None = None, sender: Any = None,
                  config: Any = None, **kwargs: Any) -> tuple[bool, Any]:
        history = messages if messages is not None else agent.chat_messages.get(sender, [])
        return reply(history, lambda asked, **params: ConversableAgent.generate_oai_reply(
            agent, asked, sender, config, **params, **kwargs))

    assistant.replace_reply_func(ConversableAgent.generate_oai_reply, ag2_reply)


def install_proxy_reply(proxy: ConversableAgent, reply: Callable[..., tuple[bool, Any]]) -> None:
    """The proxy's answer, in place of AG2's check_termination_and_human_reply (which `ag2_termination_check` still
    runs for the predicate, the reply limit and a person's input): reply(messages, sender, config)."""

    def ag2_reply(agent: ConversableAgent, messages: list[dict[str, Any]] | None = None, sender: Any = None,
                  config: Any = None, **kwargs: Any) -> tuple[bool, Any]:
        return reply(messages, sender, config)

    proxy.replace_reply_func(ConversableAgent.check_termination_and_human_reply, ag2_reply)


def ag2_termination_check(proxy: ConversableAgent, messages: list[dict[str, Any]] | None, sender: Any,
                          config: Any) -> tuple[bool, Any]:
    """AG2's own end-of-conversation check: its is_termination_msg, the reply limit, and a person's input."""
    return ConversableAgent.check_termination_and_human_reply(proxy, messages, sender, config)


def record_sent_messages(agent: ConversableAgent, hook: Callable[[Any, Any, Any, bool], Any]) -> None:
    """hook(sender, message, recipient, silent) sees every message the agent sends, before it goes."""
    agent.register_hook("process_message_before_send", hook)


class QuietIO:
    """An AG2 IOStream that prints nothing; input goes through the agent's get_human_input instead."""

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        """Drop AG2's prints."""

    def send(self, message: Any) -> None:
        """Drop AG2's events."""

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        """Not used: SandboxProxy.get_human_input asks the person."""
        return input(prompt)


@contextmanager
def quiet_ag2() -> Iterator[None]:
    """Run a block with AG2's output stream silenced: codeduet renders the conversation itself."""
    logger = logging.getLogger("autogen.oai.client")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        with IOStream.set_default(QuietIO()):
            yield
    finally:
        logger.setLevel(level)
