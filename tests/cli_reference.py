"""docs/CLI.md, the command-line reference, made from `codeduet <command> --help` itself: `make docs` writes it,
tests/test_docs.py regenerates it and fails when the page and the commands differ."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

PAGE = ROOT / "docs" / "CLI.md"
WIDTH = 110
SEPARATOR = "\x1e-- end of help --"
LAUNCH = """import json, sys
from agents.cli.app import main
for path in json.loads(sys.argv[1]):
    sys.argv = ["codeduet", *path, "--help"]
    try:
        main()
    except SystemExit:
        pass
    print(%r, flush=True)
""" % SEPARATOR
HEAD = """# The command line

Every command and flag of `codeduet` (also `python run.py` and `python -m agents`), as its `--help` prints it.
This page is made from the commands themselves (`make docs`); tests/test_docs.py fails when they drift apart.
"""


def commands() -> list[list[str]]:
    """Every command path: [], ["run"], ["sandbox"], ["sandbox", "build"], ... in the app's order."""
    import typer

    from agents.cli.app import app

    found: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        found.append(path)
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def help_texts(paths: list[list[str]]) -> list[str]:
    """`codeduet PATH --help` for each path (one process), at a fixed width, without colour or trailing blanks."""
    forced = ("FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS", "TERMINAL_WIDTH")  # typer would force a terminal's width
    env = {**{k: v for k, v in os.environ.items() if k not in forced}, "COLUMNS": str(WIDTH), "NO_COLOR": "1",
           "TERM": "dumb", "_TYPER_FORCE_DISABLE_TERMINAL": "1"}
    out = subprocess.run([sys.executable, "-c", LAUNCH, json.dumps(paths)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=120, check=True).stdout
    texts = out.split(SEPARATOR + "\n")[:len(paths)]
    return ["\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip("\n") for text in texts]


def render() -> str:
    """The whole page."""
    paths = commands()
    parts = [HEAD] + [f"## `{' '.join(['codeduet', *path])}`\n\n```text\n{text}\n```\n"
                      for path, text in zip(paths, help_texts(paths))]
    return "\n".join(parts)


if __name__ == "__main__":
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
