"""YAML loading that remembers where each key sits, so validation errors name file:line and the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from agents.loop.errors import BadInputError

Loc = tuple[Any, ...]


def _index_lines(node: yaml.Node, path: Loc, lines: dict[Loc, int]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            lines[path + (key,)] = key_node.start_mark.line + 1
            _index_lines(value_node, path + (key,), lines)
            lines[path + (key,)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, path + (i,), lines)


def load_yaml(path: Path, error: type[BadInputError] = BadInputError) -> tuple[Any, dict[Loc, int]]:
    """Parse a YAML file; return the data and a map from key path to line number."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: file not found") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from None
    return parse_yaml(text, str(path), error)


def parse_yaml(text: str, origin: str, error: type[BadInputError] = BadInputError) -> tuple[Any, dict[Loc, int]]:
    """Parse YAML text; syntax errors become `origin:line: YAML syntax error: ...`."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        if isinstance(exc, yaml.reader.ReaderError):  # a character YAML refuses: it has a position, not a mark
            line = f":{text.count(chr(10), 0, exc.position) + 1}"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and start and mark and start.line != mark.line:
            problem += f" ({context} that starts at line {start.line + 1})"
        raise error(f"{origin}{line}: YAML syntax error: {problem}") from None
    lines: dict[Loc, int] = {}
    if node is not None:
        _refuse_duplicate_keys(node, (), origin, error)
        _index_lines(node, (), lines)
    return data, lines


def _refuse_duplicate_keys(node: yaml.Node, path: Loc, origin: str, error: type[BadInputError]) -> None:
    """A key given twice in one mapping (YAML keeps the last one, silently) is an error naming both lines."""
    if isinstance(node, yaml.MappingNode):
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key, line = key_node.value, key_node.start_mark.line + 1
            if key in first:
                where = ".".join(str(p) for p in (*path, key))
                raise error(f"{origin}:{line}: {where}: duplicate key (also at line {first[key]}); keep one")
            first[key] = line
            _refuse_duplicate_keys(value_node, path + (key,), origin, error)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _refuse_duplicate_keys(item, path + (i,), origin, error)


def line_of(lines: dict[Loc, int], loc: Loc) -> int | None:
    """The line of the deepest known prefix of `loc`."""
    for n in range(len(loc), -1, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


def describe_validation(exc: ValidationError, origin: str, lines: dict[Loc, int], prefix: Loc = ()) -> str:
    """First validation error as one line: `file:line: key.path: message`."""
    errors = exc.errors()  # a typo'd key first: it is usually why a required one looks missing
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    parts = err["loc"]  # an unknown key is the location's last part, whatever it looks like (`<`)
    unknown = len(parts) - 1 if err["type"] == "extra_forbidden" else -1
    loc = prefix + tuple(p for i, p in enumerate(parts)  # validators' and union tags' names (`<named>`) are not keys
                         if i == unknown or not (isinstance(p, str) and p.startswith(("function-", "<"))))
    real: Loc = ()
    for part in loc:  # discriminated unions repeat the tag: termination.regex.regex -> termination.regex
        if not real or real[-1] != part:
            real += (part,)
    key = ".".join(shown_key(p) for p in real) or "(top level)"
    line = line_of(lines, real)
    where = f"{origin}:{line}" if line else origin
    msg = err["msg"].removeprefix("Value error, ").replace("\n", "\\n")
    if err["type"] == "extra_forbidden":
        msg = f"unknown key {str(real[-1])!r}"
        if err.get("ctx", {}).get("allowed"):
            msg += f" (allowed: {err['ctx']['allowed']})"
    elif err["type"] == "missing":
        msg = "required key is missing"
    return f"{where}: {key}: {msg}"


def shown_key(part: Any) -> str:
    """A key as an error line names it: as written, or quoted when it is blank or holds a line break."""
    text = str(part)
    return text if text.strip() == text and text.isprintable() and text else repr(text)


def validate(model: type[BaseModel], data: Any, origin: str, lines: dict[Loc, int],
             error: type[BadInputError] = BadInputError, prefix: Loc = ()) -> Any:
    """Validate data against a pydantic model; raise `error` with file:line on failure."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(describe_validation(exc, origin, lines, prefix)) from None
