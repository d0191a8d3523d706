"""docs/CLI.md, the command-line reference, made from `codeduet <command> --help` itself: `make docs` writes it,
tests/test_docs.py regenerates it and fails when the page and the commands differ."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT

PAGE = ROOT / "docs" / "CLI.md"
WIDTH = 110
LAUNCH = "import sys\nsys.argv[0] = 'codeduet'\nfrom agents.cli import main\nmain()\n"
HEAD = """# The command line

Every command and flag of `codeduet` (also `python run.py` and `python -m agents`), as its `--help` prints it.
This page is made from the commands themselves (`make docs`); tests/test_docs.py fails when they drift apart.
"""


def commands() -> list[list[str]]:
    """Every command path: [], ["run"], ["sandbox"], ["sandbox", "build"], ... in the app's order."""
    import typer

    from agents.cli import app

    found: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        found.append(path)
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def help_text(path: list[str]) -> str:
    """`codeduet PATH --help`, at a fixed width, without colour or trailing blanks."""
    forced = ("FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS", "TERMINAL_WIDTH")  # typer would force a terminal's width
    env = {**{k: v for k, v in os.environ.items() if k not in forced}, "COLUMNS": str(WIDTH), "NO_COLOR": "1",
           "TERM": "dumb", "_TYPER_FORCE_DISABLE_TERMINAL": "1"}
    out = subprocess.run([sys.executable, "-c", LAUNCH, *path, "--help"], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=60, check=True).stdout
    return "\n".join(line.rstrip() for line in out.strip("\n").splitlines()).strip("\n")


def render() -> str:
    """The whole page."""
    parts = [HEAD]
    for path in commands():
        parts.append(f"## `{' '.join(['codeduet', *path])}`\n\n```text\n{help_text(path)}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
