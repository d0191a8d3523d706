"""A task typed by a person (`codeduet chat`, the page's task box) with what it runs in and how it is checked: the
languages or a preset (agents/sandbox/presets.py) pick the image, and short acceptance checks become a scenario's
`checks:` (an expected output, a command, HTTP requests to a server the code starts)."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from agents.loop.errors import BadInputError

REQUEST = re.compile(r"^(?P<method>[A-Za-z]+)\s+(?P<path>/\S*)\s*(?P<body>.*?)\s*(?:->|→)\s*(?P<status>\d{3})"
                     r"(?:\s+(?P<text>.+))?$")
"""`POST /items {"name": "milk"} -> 201 milk`: method, path, an optional JSON body (or k=v&k=v form), the status
expected and an optional text the body must contain."""


def parse_request(line: str) -> dict[str, Any]:
    """One request line of an HTTP check as the check's `requests:` entry (BadInputError says the form)."""
    match = REQUEST.match(line.strip())
    if not match:
        raise BadInputError(f"request {line.strip()!r}: write it as METHOD /path [JSON body] -> STATUS [text], "
                            'e.g. POST /items {"name": "milk"} -> 201')
    entry: dict[str, Any] = {"method": match["method"].upper(), "path": match["path"]}
    body = match["body"]
    if body.startswith(("{", "[")):
        try:
            entry["json"] = json.loads(body)
        except json.JSONDecodeError as exc:
            raise BadInputError(f"request {line.strip()!r}: its body is not JSON ({exc.msg})") from None
    elif body:
        entry["form"] = dict(part.split("=", 1) if "=" in part else (part, "") for part in body.split("&"))
    expect: dict[str, Any] = {"status": int(match["status"])}
    if match["text"]:
        expect["text"] = match["text"].strip()
    entry["expect"] = expect
    return entry


def quick_checks(output: str = "", commands: list[str] | tuple[str, ...] = (), server: str = "",
                 port: int | str | None = None, requests: list[str] | tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The `checks:` of a typed task: the output must contain `output`; each command must exit 0; with `server` (a
    command that starts it) and `port`, each request line must get its status (and text)."""
    checks: list[dict[str, Any]] = []
    if output.strip():
        checks.append({"stdout_contains": output.strip()})
    checks += [{"command": command.strip()} for command in commands if command.strip()]
    lines = [line for line in requests if line.strip()]
    if server.strip() or lines:
        if not (server.strip() and lines and str(port or "").strip()):
            raise BadInputError("an HTTP check needs the command that starts the server, its port and at least one "
                                "request")
        if not str(port).strip().isdigit() or not 0 < int(port) < 65536:  # type: ignore[arg-type]
            raise BadInputError(f"port {port!r} is not a port number (1-65535)")
        checks.append({"http": {"start": server.strip(), "port": int(port),  # type: ignore[arg-type]
                                "requests": [parse_request(line) for line in lines]}})
    return checks


def sandbox_block(languages: list[str] | tuple[str, ...] | str = (), preset: str = "", session: str = "",
                  checks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The `sandbox:` of a typed task: its languages (a list, or `c,go`), a preset, and the Python session. No
    session chosen: a live kernel for a Python-only task (explored step by step), a fresh process for a task with
    other languages, a preset or a server to check (a server started in the kernel would hold it)."""
    if isinstance(languages, str):
        languages = [part for part in re.split(r"[,\s]+", languages) if part]
    preset = "" if preset == "none" else preset
    if not session:
        plain = not languages and not preset and not any("http" in check for check in checks or ())
        session = "kernel" if plain else "process"
    block: dict[str, Any] = {"session": session}
    if languages:
        block["languages"] = list(languages)
    if preset:
        block["preset"] = preset
    return block


def command_list(text: str) -> list[str]:
    """Commands typed one per line (blank lines dropped)."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def describe_checks(checks: list[dict[str, Any]]) -> str:
    """The checks in one line, as a person reads them back."""
    parts = []
    for check in checks:
        key, value = next(iter(check.items()))
        if key == "http":
            parts.append(f"http: {shlex.quote(value['start'])} on :{value['port']}, {len(value['requests'])} "
                         "request(s)")
        else:
            parts.append(f"{key}: {value!r}")
    return "; ".join(parts)
