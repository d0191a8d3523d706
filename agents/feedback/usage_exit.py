"""Recognising a command-line tool run bare: a saved program that reads its arguments, run with none, printed its
usage and exited non-zero. That is what a command-line tool does, not a crash, and the report says so."""

from __future__ import annotations

import ast
import re

from agents.loop.protocols import ExecResult

CLI_MODULES = {"argparse", "optparse", "getopt", "click", "typer", "fire", "docopt"}
"""Importing one of these makes a program a command-line tool."""
USAGE_LINE = re.compile(r"^\s*usage:", re.IGNORECASE | re.MULTILINE)
TRACEBACK = "Traceback (most recent call last):"
USAGE_EXITS = {1, 2}
"""argparse, click and typer exit 2; a hand-written `sys.exit("Usage: ...")` exits 1."""


def reads_arguments(source: str) -> bool:
    """Whether Python source reads its command line: `sys.argv`, or an argument parser (argparse, click, typer...)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in CLI_MODULES for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.module.split(".")[0] in CLI_MODULES
                or node.module == "sys" and any(a.name == "argv" for a in node.names)):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "argv" and isinstance(node.value, ast.Name) \
                and node.value.id == "sys":
            return True
    return False


def is_usage_exit(result: ExecResult, source: str) -> bool:
    """Whether a saved program's own run is a command-line tool printing its usage: exit 1 or 2, a line that starts
    with `usage:` (any case), no traceback, and source that reads its arguments."""
    if result.exit_code not in USAGE_EXITS or result.refused or result.saved_only or result.timed_out \
            or result.oom_killed or result.disk_full:
        return False
    return TRACEBACK not in result.output and USAGE_LINE.search(result.output) is not None \
        and reads_arguments(source)
