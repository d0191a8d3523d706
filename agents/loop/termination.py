"""The termination predicate: declarative kinds (contains/endswith/regex/success, any/all) and a callable.

Each kind is one class: its key (the YAML schema) and its `matcher`; `@PREDICATES.register` makes a scenario accept it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable

from pydantic import Field

from agents.loop.errors import ScenarioError
from agents.loop.registry import import_dotted
from agents.scenario.schema import Kinds, Pattern, Strict

MessageFn = Callable[[dict[str, Any], "RunContext"], bool]


@dataclass
class RunContext:
    """What predicates may look at besides the message: the latest execution outcome."""

    last_outcome: Any | None = None
    """agents.feedback.feedback.Outcome of the latest execution (None before the first)."""
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


PREDICATES = Kinds()
"""Every predicate kind by its key."""


class PredicateKind(Strict):
    """One kind of predicate: its only field is its key; `matcher` turns it into fn(message, context) -> bool."""

    nests: ClassVar[bool] = False
    """Its value is a list of predicates (any, all)."""

    def matcher(self) -> MessageFn:
        """fn(message, context) -> bool."""
        raise NotImplementedError


# Text predicates judge what the assistant (or a person) wrote, never a message of codeduet's own (the task,
# a report quoting program output or our instructions), so none of those can end the run by accident.

@PREDICATES.register
class Contains(PredicateKind):
    """The last message contains this text."""

    contains: str

    def matcher(self) -> MessageFn:
        """The text is in a message not ours."""
        return lambda m, c: not c.is_ours(m) and self.contains in _text(m)


@PREDICATES.register
class EndsWith(PredicateKind):
    """The last message, stripped, ends with this text."""

    endswith: str

    def matcher(self) -> MessageFn:
        """A message not ours ends with the text."""
        return lambda m, c: not c.is_ours(m) and _text(m).rstrip().endswith(self.endswith)


@PREDICATES.register
class Regex(PredicateKind):
    """The last message matches this regular expression (re.search)."""

    regex: Pattern

    def matcher(self) -> MessageFn:
        """The regex is found in a message not ours."""
        rx = re.compile(self.regex)
        return lambda m, c: not c.is_ours(m) and rx.search(_text(m)) is not None


@PREDICATES.register
class Success(PredicateKind):
    """The last execution succeeded (or the opposite with `false`): every check passed when the scenario has
    checks, else its last block exited 0."""

    success: bool = True

    def matcher(self) -> MessageFn:
        """The message is an execution report whose outcome is the one wanted."""
        def success(m: dict[str, Any], c: RunContext) -> bool:
            return c.is_report(m) and c.last_outcome is not None and bool(c.last_outcome.success) == self.success
        return success


@PREDICATES.register
class CallablePredicate(PredicateKind):
    """Escape hatch: `pkg.mod:fn(message, context) -> bool`."""

    callable: str

    def matcher(self) -> MessageFn:
        """The imported function, its answer made a bool."""
        fn = import_dotted(self.callable, "termination callable")
        if not callable(fn):
            raise ScenarioError(f"termination callable '{self.callable}' is not callable")
        return lambda m, c: bool(fn(m, c))


class Nested(PredicateKind):
    """A predicate over sub-predicates: `combine` (any or all) of their answers."""

    nests: ClassVar[bool] = True
    combine: ClassVar[Callable[[Iterable[bool]], bool]]

    def matcher(self) -> MessageFn:
        """The sub-predicates' answers, combined."""
        subs = [p.matcher() for p in getattr(self, next(iter(type(self).model_fields)))]
        combine = type(self).combine
        return lambda m, c: combine(s(m, c) for s in subs)


@PREDICATES.register
class AnyOf(Nested):
    """True when any sub-predicate holds."""

    combine: ClassVar[Callable[[Iterable[bool]], bool]] = any
    any: list["Predicate"] = Field(min_length=1)


@PREDICATES.register
class AllOf(Nested):
    """True when all sub-predicates hold."""

    combine: ClassVar[Callable[[Iterable[bool]], bool]] = all
    all: list["Predicate"] = Field(min_length=1)


Predicate = PREDICATES.union()
AnyOf.model_rebuild()
AllOf.model_rebuild()


def default_termination() -> AnyOf:
    """TERMINATE in a message, or a successful execution (every check passed; no checks: exit code 0)."""
    return AnyOf(any=[Contains(contains="TERMINATE"), Success(success=True)])


def compile_predicate(pred: PredicateKind) -> MessageFn:
    """Turn a validated predicate into fn(message, context) -> bool."""
    return pred.matcher()
