"""A typed task's languages, preset and acceptance checks (agents/scenario/task_spec.py), as `chat` and the page's task
box
make them: each becomes a scenario that validates as a file would."""

from __future__ import annotations

import pytest

from agents.loop.errors import BadInputError
from agents.scenario.task_spec import parse_request, quick_checks, sandbox_block
from agents.ui.typed import typed_scenario


def test_a_request_line_gives_method_path_body_status_and_text():
    assert parse_request('POST /items {"name": "milk"} -> 201 milk') == {
        "method": "POST", "path": "/items", "json": {"name": "milk"}, "expect": {"status": 201, "text": "milk"}}
    assert parse_request("get /health -> 200") == {"method": "GET", "path": "/health", "expect": {"status": 200}}
    assert parse_request("POST /login user=ann&pw=x → 302")["form"] == {"user": "ann", "pw": "x"}


@pytest.mark.parametrize("line", ["/items -> 200", "GET items -> 200", "GET /items", 'POST /x {"a": } -> 200'])
def test_a_malformed_request_line_says_the_form(line):
    with pytest.raises(BadInputError, match="METHOD /path|not JSON"):
        parse_request(line)


def test_quick_checks_make_each_kind_and_refuse_a_half_http_check():
    checks = quick_checks("sum 12", ["pytest -q", " "], "python3 app.py", "8000", ["GET / -> 200", ""])
    assert checks[:2] == [{"stdout_contains": "sum 12"}, {"command": "pytest -q"}]
    assert checks[2]["http"]["start"] == "python3 app.py" and checks[2]["http"]["port"] == 8000
    assert quick_checks() == []
    with pytest.raises(BadInputError, match="needs the command"):
        quick_checks(requests=["GET / -> 200"])
    with pytest.raises(BadInputError, match="not a port"):
        quick_checks(server="node server.js", port="http", requests=["GET / -> 200"])


def test_the_sandbox_of_a_typed_task():
    assert sandbox_block("c, go", "backend", "kernel") == {"session": "kernel", "languages": ["c", "go"],
                                                          "preset": "backend"}
    assert sandbox_block((), "none") == {"session": "kernel"}  # Python alone: explored in a live kernel
    assert sandbox_block("", "frontend") == {"session": "process", "preset": "frontend"}
    assert sandbox_block("", "", "", [{"http": {}}]) == {"session": "process"}  # a server would hold a kernel


def test_the_task_box_fields_become_a_scenario_with_its_image_and_checks():
    data = typed_scenario({"task": "Serve the items.", "languages": "", "preset": "backend", "session": "process",
                           "expect_output": "", "check_commands": "python3 -m pytest -q\n",
                           "server": "python3 app.py", "port": "8000", "requests": "GET /items -> 200 []\n"},
                          {}, [])
    assert data["sandbox"] == {"session": "process", "preset": "backend"}
    assert data["checks"][0] == {"command": "python3 -m pytest -q"}
    assert data["checks"][1]["http"]["requests"] == [{"method": "GET", "path": "/items",
                                                      "expect": {"status": 200, "text": "[]"}}]
    with pytest.raises(BadInputError):
        typed_scenario({"task": "x", "server": "python3 app.py", "requests": "GET / -> 200"}, {}, [])


def test_the_task_box_offers_every_preset():
    from agents.sandbox.presets import PRESETS
    from agents.ui.typed import PRESET_CHOICES

    assert [name for name, _ in PRESET_CHOICES] == list(PRESETS)
