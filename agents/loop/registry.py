"""Registries by name or dotted path: `{"scripted": "agents.models.scripted:ScriptedProvider"}`."""

from __future__ import annotations

import importlib
from typing import Any

from agents.loop.errors import BadInputError


def import_dotted(path: str, what: str = "object") -> Any:
    """Import `pkg.mod:attr` (or `pkg.mod.attr`); a failure is one BadInputError line."""
    if ":" in path:
        module_name, _, attr = path.partition(":")
    else:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise BadInputError(f"{what} '{path}' is not a dotted path like 'package.module:name'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BadInputError(f"{what} '{path}': cannot import module '{module_name}' ({exc})") from None
    try:
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj
    except AttributeError:
        raise BadInputError(f"{what} '{path}': module '{module_name}' has no attribute '{attr}'") from None


def resolve(registry: dict[str, str], name: str, what: str) -> Any:
    """Look a name up in a registry, or import it as a dotted path."""
    if name in registry:
        return import_dotted(registry[name], what)
    if "." in name or ":" in name:
        return import_dotted(name, what)
    raise BadInputError(f"unknown {what} '{name}' (known: {', '.join(sorted(registry))}, or a dotted path)")
