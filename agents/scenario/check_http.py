"""The `http:` check: start a server command in the sandbox, wait for its port, send the listed requests in order and
compare each answer (status, headers, JSON subset or text), then stop the server. The part that runs in the sandbox
is a stdlib script (agents/sandbox/incontainer/http_check.py), written fresh into the hidden checks folder before
each run; it answers with one JSON line that this module turns into the report the model reads."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer, model_validator

from agents.loop.protocols import ExecResult, Executor
from agents.sandbox import incontainer
from agents.sandbox.filenames import CHECKS_DIR
from agents.sandbox.incontainer.http_check import MARKER
from agents.sandbox.safe_write import write_new_file
from agents.scenario.check_kinds import CHECKS, CheckKind, Verdict
from agents.scenario.schema import Strict

SCRIPT = "http_check.py"
LOG_LINES, LOG_CHARS = 12, 1200
"""How much of the server's log the report quotes (its last lines)."""
REQUEST_TIMEOUT = 10.0
"""Seconds one request may wait for its answer."""
SHOWN_FAILURES = 5
"""Failed requests the report names one by one (the first ones: a later failure often follows from them)."""
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")
"""A terminal colour or cursor code (werkzeug colours its request log)."""
LIBRARY_FRAME = re.compile(r"\s+at .*(/usr/(share|lib)/nodejs/|node_modules/|node:internal)")
"""A Node stack frame inside a library (express's router): the log's tail keeps the program's own frames."""


class JsonField(Strict):
    """A block with a `json` key (a field named json_: `json` is a method of pydantic's models): dumped as `json`,
    so a transcript's scenario validates again (`replay --execute` re-runs the checks)."""

    @model_serializer(mode="wrap")
    def _json_key(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if "json_" in data:
            data["json"] = data.pop("json_")
        return data


class HttpExpect(JsonField):
    """What one answer must be; a field left out is not compared."""

    status: int | None = Field(default=None, ge=100, le=599)
    """The status code (default: any status below 400)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Headers the answer must have: names in any case, each value a substring of the answer's."""
    json_: Any = Field(default=None, alias="json")
    """The body parsed as JSON must contain this: a mapping its listed keys (recursively), a list as many items,
    each a subset, a scalar the same value."""
    text: str | None = None
    """Text the body must contain."""


class HttpRequest(JsonField):
    """One request, sent in order after the server listens."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] = "GET"
    """The HTTP method."""
    path: str = "/"
    """The path and query string, starting with `/` (`/items?limit=2`)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Request headers."""
    json_: Any = Field(default=None, alias="json")
    """A JSON body (sent as application/json)."""
    form: dict[str, str] | None = None
    """A form body (sent as application/x-www-form-urlencoded)."""
    body: str | None = None
    """A raw text body."""
    expect: HttpExpect = Field(default_factory=HttpExpect)
    """What the answer must be."""

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, v: object) -> object:
        return v.upper() if isinstance(v, str) else v

    @field_validator("path")
    @classmethod
    def _path(cls, v: str) -> str:
        if not v.startswith("/") or any(c in v for c in " \r\n"):
            raise ValueError(f"'{v}' is not a path: it starts with / and has no spaces (`/items?limit=2`)")
        return v

    @model_validator(mode="after")
    def _one_body(self) -> "HttpRequest":
        if sum(x is not None for x in (self.json_, self.form, self.body)) > 1:
            raise ValueError("a request has one body: json, form or body")
        return self

    def name(self) -> str:
        """`POST /items`."""
        return f"{self.method} {self.path}"


class HttpSpec(Strict):
    """A server started in the sandbox and the requests it must answer."""

    start: str = Field(min_length=1)
    """The command that starts the server (sh -c, in /workspace), run in the background."""
    port: int = Field(ge=1, le=65535)
    """The loopback port it must listen on."""
    ready_timeout: float = Field(default=20, gt=0, le=600)
    """Seconds to wait for the port; a server that exits or never listens fails with its own output."""
    requests: list[HttpRequest] = Field(min_length=1)
    """The requests, sent in order (a POST then the GET that must see it)."""


@CHECKS.register
class HttpCheck(CheckKind):
    """An HTTP service started in the sandbox answers the listed requests as expected."""

    http: HttpSpec

    def label(self) -> str:
        """`http: 'python3 app.py' on :8000 (3 requests)`."""
        n = len(self.http.requests)
        return f"http: {self.http.start!r} on :{self.http.port} ({n} request{'s' if n != 1 else ''})"

    def evaluate(self, last: ExecResult, executor: Executor, base_dir: Path) -> Verdict:
        """Run the script in the sandbox (whatever the last block's exit code); passed when every request got the
        answer expected; requests passed and sent count as tests."""
        source = (Path(incontainer.__file__).parent / SCRIPT).read_text(encoding="utf-8")
        write_new_file(executor.workspace, f"{CHECKS_DIR}/{SCRIPT}", source)  # fresh: the code cannot tamper with it
        # in a container every process that appears while the check runs is the check's; on the local executor
        # (this machine, no isolation) other programs start too, so only the server's group is stopped there
        sandboxed = executor.describe().get("kind") == "docker"
        spec = self.http.model_dump(by_alias=True) | {"request_timeout": REQUEST_TIMEOUT, "sandboxed": sandboxed}
        limit = self.http.ready_timeout + REQUEST_TIMEOUT * len(self.http.requests) + 10
        # -I: the workspace (on PYTHONPATH) cannot shadow a module the script imports (a json.py, an http/ package)
        result = executor.run_command(["python3", "-I", f"{CHECKS_DIR}/{SCRIPT}", json.dumps(spec)], timeout=limit)
        return verdict(self.http, result)


def verdict(spec: HttpSpec, result: ExecResult) -> Verdict:
    """(passed, report, requests passed, requests) from the script's JSON line."""
    total = len(spec.requests)
    line = next((ln for ln in reversed(result.output.splitlines()) if ln.startswith(MARKER)), None)
    try:
        data: dict[str, Any] = json.loads(line[len(MARKER):]) if line else {}
    except ValueError:
        data = {}
    if not data:  # the script itself did not finish (the time limit, or the sandbox)
        why = "it was stopped at the time limit" if result.timed_out else f"it exited with {result.exit_code}"
        return False, f"the HTTP check did not finish: {why}:\n{tail(result.output)}", 0, total
    if not data.get("ready"):
        return False, not_ready(spec, data), 0, total
    results = data.get("results") or []
    passed = sum(1 for r in results if r.get("ok"))
    if passed == total:
        return True, "", passed, total
    names = [r.name() for r in spec.requests]
    lines = [f"{total - passed} of {total} requests failed:"]
    for i, r in enumerate(results):  # a name sent twice (GET /items before and after a POST) gets its number
        name = f"{names[i]} (request {i + 1})" if i < total and names.count(names[i]) > 1 else r.get("request")
        if not r.get("ok") and len(lines) <= SHOWN_FAILURES:
            lines.append(f"{name}: {'; '.join(r.get('problems') or ['failed'])}"
                         + (f"; body: {r['body']}" if r.get("body") else ""))
    if total - passed > SHOWN_FAILURES:
        lines.append(f"(and {total - passed - SHOWN_FAILURES} more)")
    log = tail(data.get("log") or "")
    lines.append(f"server log (last lines):\n{log}" if log else "the server printed nothing")
    return False, "\n".join(lines), passed, total


def not_ready(spec: HttpSpec, data: dict[str, Any]) -> str:
    """Why no request was sent: the port was taken, the server exited, or it never listened; its own output."""
    if data.get("busy"):
        return (f"port {spec.port} was already in use before `{spec.start}` started (a server left running by an "
                "earlier block?); nothing was sent")
    log = tail(data.get("log") or "") or "(no output)"
    if data.get("exited") is not None:
        return f"`{spec.start}` exited with {data['exited']} before it listened on port {spec.port}; its output:\n{log}"
    return (f"`{spec.start}` did not listen on port {spec.port} within {spec.ready_timeout:g} s (it must listen on "
            f"127.0.0.1 or 0.0.0.0, port {spec.port}); its output:\n{log}")


def tail(text: str) -> str:
    """The last lines of a log, at most LOG_LINES and LOG_CHARS, without terminal colours."""
    lines = [ln.rstrip() for ln in ANSI.sub("", text).strip().splitlines()
             if ln.strip() and not LIBRARY_FRAME.match(ln)][-LOG_LINES:]
    return "\n".join(lines)[-LOG_CHARS:]
