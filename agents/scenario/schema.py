"""What every config block shares: unknown keys are errors, regexes must compile, and kinds are named by one key."""

from __future__ import annotations

import re
from typing import Annotated, Any, TypeVar, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Tag


class Strict(BaseModel):
    """Base for every config block: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


def _compiles(pattern: str) -> str:
    """Reject a regular expression that does not compile."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    return pattern


Pattern = Annotated[str, AfterValidator(_compiles)]


def _single_key(value: Any) -> str | None:
    """Discriminator: a predicate or check is a mapping whose first key names its kind (a check's other keys are
    its options: `{command: make test, exit_code: 2}`)."""
    if isinstance(value, dict) and value:  # its first key; the others are the kind's options ({command:, files:})
        return next(iter(value))
    if isinstance(value, BaseModel):
        return next(iter(type(value).model_fields))
    return None


K = TypeVar("K", bound=type[Strict])


class Kinds(dict[str, type[Strict]]):
    """One family of one-key blocks (checks, predicates): each kind by the key that names it in YAML."""

    def register(self, cls: K) -> K:
        """Class decorator: the kind's first field is its key (`stdout_contains: "42"`)."""
        self[next(iter(cls.model_fields))] = cls
        return cls

    def union(self, what: str | None = None) -> Any:
        """The type a field of this family has: one of the kinds, told apart by its key; `what` names a member in
        the one-line error an unknown key gets (`a step`: "a step is one of: exists, text, ...")."""
        told = {"custom_error_type": "unknown_kind", "custom_error_message": f"{what} is one of: {', '.join(self)}"} \
            if what else {}
        return Annotated[Union[tuple(Annotated[cls, Tag(key)] for key, cls in self.items())],
                         Discriminator(_single_key, **told)]
