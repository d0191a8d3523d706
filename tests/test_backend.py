"""Backend services through `codeduet run` in the real Docker sandbox of the backend preset (scripted model): the
Flask, FastAPI, express and Go net/http scenarios debug to success against their `http:` check, the first, wrong
reply's report naming each failed request with expected against actual and the server's log; a server block is
reported as a server (its port, how long it took to listen), never as "remove infinite loops"; a reply that writes
no server and a server that never listens on the port are reported by their own output; a test client (Flask's,
under pytest) works through the `command:` check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT, py
from tests.helpers import run_cli, toolchains_image

pytestmark = pytest.mark.docker

SCENARIOS = ROOT / "scenarios"


@pytest.fixture(scope="module")
def backend_sandbox() -> str:
    """The image the backend preset resolves to: the toolchains image with the web preset (built if missing)."""
    return toolchains_image()


def run(path: Path, root: Path) -> tuple[int, dict]:
    """`codeduet run PATH --json`: its exit code and the run's transcript."""
    proc = run_cli("run", str(path), "--workspace", str(root), "--json", timeout=600)
    assert proc.stdout.strip(), proc.stderr
    return proc.returncode, load_transcript(Path(json.loads(proc.stdout)["run_dir"]))


def reports(transcript: dict) -> list[dict]:
    """The execution reports (the messages the model read after each reply), in order."""
    return [m for m in transcript["messages"] if m["role"] == "execution"]


@pytest.mark.parametrize("name, port, first_failure", [
    ("flask_scripted", 8000, "POST /items (request 1): expected status 201, got 200; body: {\"id\":1"),
    ("fastapi_scripted", 8000, "POST /todos (request 2): expected status 422, got 200"),
    ("express_scripted", 3000, "POST /notes (request 2): expected status 201, got 500; body: Error TypeError: "
                               "Cannot read properties of undefined (reading 'text')"),
    ("go_http_scripted", 8080, "GET /counters/other: expected status 404, got 200; body: {\"name\":\"other\""),
])
def test_each_backend_scenario_debugs_to_success_against_its_http_check(name, port, first_failure, backend_sandbox,
                                                                         tmp_path):
    code, t = run(SCENARIOS / f"{name}.yaml", tmp_path / "ws")
    assert code == 0 and t["status"] == "success", t["reason"]
    wrong, right = reports(t)
    [check] = wrong["outcome"]["checks"]
    assert not check["passed"] and first_failure in check["detail"]
    log = "the server printed nothing" if name == "go_http_scripted" else "server log (last lines):"
    assert log in check["detail"]
    assert check["tests"] > check["tests_passed"] >= 0  # requests passed and sent rank the replies
    assert first_failure in wrong["content"] and "remove infinite loops" not in wrong["content"]
    [check] = right["outcome"]["checks"]
    assert check["passed"] and check["tests_passed"] == check["tests"] and check["name"].startswith("http: ")
    block = right["outcome"]["executions"][0]
    if name != "fastapi_scripted":  # app.py and server.js start their server; FastAPI's main.py only defines it
        assert block["server"]["port"] == port and block["server"]["listen_s"] < 10 and not block["timed_out"]
        assert f"listened on port {port} after" in right["content"] and "as a server is" in right["content"]
    if name == "flask_scripted":  # replay --execute runs the server blocks and the http check again
        proc = run_cli("replay", t["run_dir"], "--execute", timeout=600)
        assert proc.returncode == 0 and "2 block(s): 2 match, 0 diverged" in proc.stdout, proc.stdout + proc.stderr
        assert "cannot be re-run" not in proc.stdout


def scripted(tmp_path: Path, name: str, replies: list[str], **changes) -> Path:
    """A copy of a scenario whose model is the scripted one with these replies, one attempt, and `changes`."""
    data = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text(encoding="utf-8"))
    data.update(model={"provider": "scripted", "replies": replies}, strategy={"attempts": 1},
                user_proxy={"max_consecutive_auto_reply": len(replies)}, **changes)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_a_reply_that_writes_no_server_fails_with_the_commands_own_output(backend_sandbox, tmp_path):
    code, t = run(scripted(tmp_path, "flask_health_items", [py("print('done')")]), tmp_path / "ws")
    assert code != 0 and t["status"] != "success"
    [check] = reports(t)[0]["outcome"]["checks"]
    assert check["detail"].startswith("`python3 app.py` exited with 2 before it listened on port 8000; its output:")
    assert "can't open file '/workspace/app.py'" in check["detail"] and check["tests"] == 6


def test_a_server_on_another_port_is_reported_by_its_own_output(backend_sandbox, tmp_path):
    app = ("```python\n# filename: app.py\nfrom flask import Flask\napp = Flask(__name__)\n"
           "app.run(port=8001)\n```")
    data = yaml.safe_load((SCENARIOS / "flask_health_items.yaml").read_text(encoding="utf-8"))
    data["checks"][0]["http"]["ready_timeout"] = 3
    code, t = run(scripted(tmp_path, "flask_health_items", [app], checks=data["checks"]), tmp_path / "ws")
    report = reports(t)[0]
    [check] = report["outcome"]["checks"]
    assert check["detail"].startswith("`python3 app.py` did not listen on port 8000 within 3 s")
    assert "Running on http://127.0.0.1:8001" in check["detail"]
    assert report["outcome"]["executions"][0]["server"]["port"] == 8001  # its own run: a server, on 8001
    assert "listened on port 8001" in report["content"] and "remove infinite loops" not in report["content"]


def test_the_local_model_backend_scenario_is_a_small_realistic_service():
    scenario = load_scenario(SCENARIOS / "flask_health_items.yaml")
    assert not isinstance(scenario.model, dict) and scenario.sandbox.preset == "backend"
    [check] = scenario.checks
    assert [r.name() for r in check.http.requests] == ["GET /health", "GET /items", "POST /items", "POST /items",
                                                       "POST /items", "GET /items"]


def test_a_stdlib_server_block_in_a_conversation_is_a_server_not_a_time_out(sandbox_image, workspaces,
                                                                              scenario_file):
    server = ("```python\n# filename: serve.py\nfrom http.server import HTTPServer, SimpleHTTPRequestHandler\n"
              "print('listening on 8000', flush=True)\n"
              "HTTPServer(('0.0.0.0', 8000), SimpleHTTPRequestHandler).serve_forever()\n```")
    checks = [{"http": {"start": "python3 serve.py", "port": 8000,
                        "requests": [{"path": "/serve.py", "expect": {"text": "serve_forever"}}]}}]
    result = run_scenario(load_scenario(scenario_file([server], checks=checks)), RunOptions())
    assert result.status == "success", result.reason
    [report] = reports(load_transcript(result.run_dir))
    block = report["outcome"]["executions"][0]
    assert block["server"]["port"] == 8000 and not block["timed_out"] and block["duration_s"] < 10
    assert "listening on 8000" in report["content"] and "remove infinite loops" not in report["content"]


FLASK_TEST = """from app import app


def test_health():
    client = app.test_client()
    assert client.get("/health").get_json() == {"status": "ok"}


def test_add_then_list():
    client = app.test_client()
    assert client.post("/items", json={"name": "fig"}).status_code == 201
    assert client.get("/items").get_json()[-1] == {"name": "fig"}
"""


def test_a_test_client_check_works_through_the_command_check(backend_sandbox, tmp_path):
    """Flask's test client under pytest, as hidden tests of a `command:` check (no server, no port)."""
    reference = (SCENARIOS / "reference" / "flask_health_items.md").read_text(encoding="utf-8")
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "test_app.py").write_text(FLASK_TEST, encoding="utf-8")
    checks = [{"command": "python3 -m pytest -q -p no:cacheprovider test_app.py", "files": {"test_app.py":
                                                                                          "hidden/test_app.py"}}]
    code, t = run(scripted(tmp_path, "flask_health_items", [reference], checks=checks), tmp_path / "ws")
    assert code == 0 and t["status"] == "success", t["reason"]
    [check] = reports(t)[0]["outcome"]["checks"]
    assert check["passed"] and (check["tests_passed"], check["tests"]) == (2, 2)
