"""The termination predicate: declarative kinds (contains/endswith/regex/success, any/all) and a callable."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from agents.registry import import_dotted
from agents.scenario import AllOf, AnyOf, CallablePredicate, Contains, EndsWith, Predicate, Regex, Success

MessageFn = Callable[[dict[str, Any], "RunContext"], bool]


@dataclass
class RunContext:
    """What predicates may look at besides the message: the latest execution outcome."""

    last_outcome: Any | None = None
    """agents.feedback.Outcome of the latest execution (None before the first)."""
    report_contents: set[str] = field(default_factory=set)
    """Contents of messages that are execution reports, so `success` knows which message it judges."""
    sent_contents: set[str] = field(default_factory=set)
    """Contents of the other messages codeduet itself sends: the task, a resumed run's follow-up."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Free space for callable predicates."""

    def is_report(self, message: dict[str, Any] | str | None) -> bool:
        """Whether this message is an execution report written by the user proxy."""
        return _text(message) in self.report_contents

    def is_ours(self, message: dict[str, Any] | str | None) -> bool:
        """Whether codeduet wrote this message (a report, a nudge, the task, a follow-up), not the assistant or a
        person: text predicates never judge it ("...then reply TERMINATE" in a task must not end the run)."""
        text = _text(message)
        return text in self.report_contents or text in self.sent_contents


def _text(message: dict[str, Any] | str | None) -> str:
    if isinstance(message, dict):
        content = message.get("content")
    else:
        content = message
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def compile_predicate(pred: Predicate) -> MessageFn:
    """Turn a validated predicate into fn(message, context) -> bool."""
    # Text predicates judge what the assistant (or a person) wrote, never a message of codeduet's own (the task,
    # a report quoting program output or our instructions), so none of those can end the run by accident.
    if isinstance(pred, Contains):
        return lambda m, c: not c.is_ours(m) and pred.contains in _text(m)
    if isinstance(pred, EndsWith):
        return lambda m, c: not c.is_ours(m) and _text(m).rstrip().endswith(pred.endswith)
    if isinstance(pred, Regex):
        rx = re.compile(pred.regex)
        return lambda m, c: not c.is_ours(m) and rx.search(_text(m)) is not None
    if isinstance(pred, Success):
        def success(m: dict[str, Any], c: RunContext) -> bool:
            return c.is_report(m) and c.last_outcome is not None and bool(c.last_outcome.success) == pred.success
        return success
    if isinstance(pred, CallablePredicate):
        fn = import_dotted(pred.callable, "termination callable")
        if not callable(fn):
            from agents.errors import ScenarioError

            raise ScenarioError(f"termination callable '{pred.callable}' is not callable")
        return lambda m, c: bool(fn(m, c))
    if isinstance(pred, AnyOf):
        subs = [compile_predicate(p) for p in pred.any]
        return lambda m, c: any(s(m, c) for s in subs)
    if isinstance(pred, AllOf):
        subs = [compile_predicate(p) for p in pred.all]
        return lambda m, c: all(s(m, c) for s in subs)
    raise TypeError(f"unknown predicate {pred!r}")
