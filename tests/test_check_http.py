"""The `http:` check with the local executor (fast: the host's python3 serves with http.server): requests sent in
order and compared, the report naming each failed request with expected against actual and the server's log; a
server that exits or never listens reported by its own output; the comparison rules of the sandbox script."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from pydantic import ValidationError

from agents.loop.protocols import ExecResult
from agents.sandbox.config import SandboxConfig
from agents.sandbox.incontainer.http_check import compare, subset
from agents.sandbox.local_executor import LocalExecutor
from agents.scenario.check_http import HttpCheck
from agents.scenario.checks import run_checks
from agents.scenario.spec import Scenario
from tests.helpers import free_port

APP = '''
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
items = []
class Handler(BaseHTTPRequestHandler):
    def send(self, code, data):
        body = json.dumps(data).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        self.send(200, items) if self.path == "/items" else self.send(404, {"error": "not found"})
    def do_POST(self):
        data = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not data.get("name"):
            return self.send(400, {"error": "name is required"})
        items.append(data)
        self.send(201, data)
print("listening on", sys.argv[1], flush=True)
HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
'''
REQUESTS = [
    {"method": "post", "path": "/items", "json": {"name": "apple"},
     "expect": {"status": 201, "headers": {"Content-Type": "json"}, "json": {"name": "apple"}}},
    {"method": "POST", "path": "/items", "json": {}, "expect": {"status": 400, "text": "required"}},
    {"path": "/items", "expect": {"json": [{"name": "apple"}]}},
    {"path": "/items/9", "expect": {"status": 404}},
]


def check(workspace: Path, port: int, requests: list | None = None, start: str | None = None, **spec) -> tuple:
    """Run one http check against the workspace's app.py with the local executor: (passed, detail, passed, total)."""
    executor = LocalExecutor(SandboxConfig(kind="local", timeout=30), workspace)
    kind = HttpCheck.model_validate({"http": {"start": start or f"python3 app.py {port}", "port": port,
                                              "requests": requests or REQUESTS, **spec}})
    result = run_checks([kind], workspace, executor, ExecResult(0, "", 0.0))[0]
    return result.passed, result.detail, result.tests_passed, result.tests


@pytest.fixture
def app(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    return tmp_path


def test_a_service_that_answers_as_expected_passes(app: Path):
    assert check(app, free_port()) == (True, "", 4, 4)


def test_a_wrong_answer_names_the_request_with_expected_against_actual_and_the_log(app: Path):
    port = free_port()
    wrong = [REQUESTS[0], {"path": "/items", "expect": {"json": [{"name": "pear"}]}},
             {"path": "/items/1", "expect": {"status": 200, "json": {"name": "apple"}}}]
    passed, detail, ok, total = check(app, port, wrong)
    assert (passed, ok, total) == (False, 1, 3)
    assert "2 of 3 requests failed" in detail
    assert 'GET /items: JSON body $[0].name: expected "pear", got "apple"' in detail
    assert "GET /items/1: expected status 200, got 404" in detail and '"error": "not found"' in detail
    assert f"listening on {port}" in detail and '"GET /items/1 HTTP/1.1" 404' in detail  # the server's log


def test_a_server_that_exits_before_listening_is_reported_by_its_own_output(tmp_path: Path):
    (tmp_path / "app.py").write_text("import flask_missing_module\n", encoding="utf-8")
    passed, detail, ok, total = check(tmp_path, free_port(), start="python3 app.py")
    assert (passed, ok, total) == (False, 0, 4)
    assert detail.startswith("`python3 app.py` exited with 1 before it listened on port")
    assert "ModuleNotFoundError: No module named 'flask_missing_module'" in detail


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_server_that_never_listens_is_reported_after_its_ready_timeout(tmp_path: Path):
    port = free_port()
    passed, detail, _, _ = check(tmp_path, port, start="echo starting; sleep 30", ready_timeout=1)
    assert not passed
    assert f"did not listen on port {port} within 1 s" in detail and "starting" in detail


def test_a_port_already_taken_is_said_and_nothing_is_sent(app: Path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        passed, detail, _, _ = check(app, port)
    assert not passed and f"port {port} was already in use" in detail


def test_the_json_subset_rules():
    assert subset({"a": 1}, {"a": 1, "b": 2}) is None
    assert subset([{"a": 1}, {}], [{"a": 1, "b": 2}, {"c": 3}]) is None
    assert subset([{"a": 1}], [{"a": 1}, {"a": 2}]) == "$: expected 1 items, got 2"
    assert subset({"a": {"b": True}}, {"a": {"b": 1}}) == "$.a.b: expected true, got 1"  # a bool is no number
    assert subset({"id": 1}, {"name": "x"}) == "$.id: missing"
    assert subset(1, 1.0) is None


def test_status_headers_and_text_are_compared():
    headers = {"content-type": "application/json; charset=utf-8"}
    assert compare({}, 200, headers, "") == []
    assert compare({}, 500, headers, "") == ["expected a success status, got 500"]
    assert compare({"headers": {"Content-Type": "JSON"}}, 200, headers, "") == []
    assert compare({"headers": {"X-Id": "1"}}, 200, headers, "") == ["expected header X-Id: '1', it is missing"]
    assert compare({"text": "apple"}, 200, headers, "pear") == ["expected the body to contain 'apple'"]
    assert compare({"json": {"a": 1}}, 200, headers, "<html>") == \
        ["expected a JSON body matching {\"a\": 1}, got a body that is not JSON"]


def test_the_scenario_schema_accepts_the_http_check_and_names_its_mistakes():
    base = {"name": "t", "task": "x", "model": {"provider": "scripted", "replies": []}}
    http = {"start": "python3 app.py", "port": 8000, "requests": [{"path": "/health"}]}
    scenario = Scenario.model_validate({**base, "checks": [{"http": http}]})
    assert scenario.checks[0].label() == "http: 'python3 app.py' on :8000 (1 request)"
    for bad, words in ((dict(http, requests=[{"path": "health"}]), "is not a path"),
                       (dict(http, requests=[{"path": "/", "json": {}, "body": "x"}]), "one body"),
                       (dict(http, requests=[]), "at least 1"), (dict(http, port=0), "greater than or equal")):
        with pytest.raises(ValidationError, match=words):
            Scenario.model_validate({**base, "checks": [{"http": bad}]})


def test_the_script_is_written_fresh_into_the_hidden_checks_folder(app: Path):
    (app / ".codeduet_checks").mkdir()
    (app / ".codeduet_checks" / "http_check.py").write_text("print('tampered')\n", encoding="utf-8")
    assert check(app, free_port(), REQUESTS[:1])[0]
    text = (app / ".codeduet_checks" / "http_check.py").read_text(encoding="utf-8")
    assert "tampered" not in text and textwrap.dedent(text).startswith('"""The `http:` check')


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_workspace_module_named_like_the_library_cannot_shadow_the_script(app: Path):
    (app / "json.py").write_text("raise SystemExit('the workspace json.py was imported')\n", encoding="utf-8")
    (app / "http").mkdir()
    (app / "http" / "__init__.py").write_text("raise SystemExit('the workspace http package was imported')\n",
                                              encoding="utf-8")
    passed, detail, _, _ = check(app, free_port(), REQUESTS[:1], start="sleep 5", ready_timeout=1)
    assert not passed and "did not listen" in detail and "imported" not in detail


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_conversation_debugs_a_stdlib_service_to_success_with_the_local_executor(loop_file):
    from agents.loop.conversation import RunOptions, run_scenario
    from agents.record.transcript import load_transcript
    from agents.scenario.spec import load_scenario

    port = free_port()
    app = APP.replace("sys.argv[1]", str(port))  # the block's own run serves on the port too
    wrong = app.replace("self.send(201, data)", "self.send(200, data)")
    reply = "```python\n# filename: app.py\n{}\n```"
    checks = [{"http": {"start": "python3 app.py", "port": port, "requests": REQUESTS}}]
    path = loop_file([reply.format(wrong), reply.format(app)], checks=checks, sandbox={"server_seconds": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    first, second = [m for m in load_transcript(result.run_dir)["messages"] if m["role"] == "execution"]
    assert "POST /items (request 1): expected status 201, got 200" in first["content"]
    assert first["outcome"]["checks"][0]["tests_passed"] == 3 and second["outcome"]["checks"][0]["passed"]
    assert first["outcome"]["executions"][0]["server"]["port"] == port  # the block's own run: a server
