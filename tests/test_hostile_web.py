"""The hostile suite in the web image (preset web: Flask, Node, a headless Chromium): a server that binds every
interface and reaches out from a request handler, a fork bomb in a request handler, and a browser left running.
Nothing may escape the container, the evidence is measured inside it and on the host, and nothing is left running
after the run. tests/test_hostile.py holds the Python cases for the default image."""

from __future__ import annotations

import json
import secrets

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.conftest import py
from tests.helpers import containers_under, host_listener, toolchains_image
from tests.test_hostile import LEFTOVERS, _bridge_gateway, _host_processes_with

pytestmark = pytest.mark.docker


@pytest.fixture(scope="session")
def web_sandbox() -> str:
    """The image of the web preset: the one with every toolchain too, which the tests share (built if missing)."""
    return toolchains_image()


def run_web(scenario_file, web_sandbox, replies: list[str], checks: list | None = None, termination=None,
            **sandbox):
    """Run the replies in the web image; the run and its execution reports, in order."""
    extra = {"termination": termination} if termination else {}
    path = scenario_file(replies, sandbox={"image": web_sandbox, "preset": "web", "timeout": 20, **sandbox},
                         checks=checks or [], **extra)
    result = run_scenario(load_scenario(path), RunOptions())
    return result, [m for m in load_transcript(result.run_dir)["messages"] if m["role"] == "execution"]


EGRESS_APP = """# filename: app.py
import socket
from flask import Flask

app = Flask(__name__)


@app.get("/egress")
def egress():
    seen = {{}}
    for host, port in {targets!r}:
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect((host, port))
            seen[f"{{host}}:{{port}}"] = "CONNECTED"
        except OSError:
            seen[f"{{host}}:{{port}}"] = "BLOCKED"
        finally:
            s.close()
    try:
        socket.getaddrinfo("deb.debian.org", 80)
        seen["dns"] = "RESOLVED"
    except OSError:
        seen["dns"] = "BLOCKED"
    seen["interfaces"] = sorted(name for _, name in socket.if_nameindex())
    return seen


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=8000)  # every interface of the container: it has only loopback
"""


def test_a_server_on_every_interface_reaches_nothing_from_its_handlers(scenario_file, web_sandbox, workspaces):
    with host_listener() as (port, accepted):
        targets = [(_bridge_gateway(), port), ("1.1.1.1", 80), ("8.8.8.8", 53)]
        expected = {f"{h}:{p}": "BLOCKED" for h, p in targets} | {"dns": "BLOCKED", "interfaces": ["lo"]}
        check = {"http": {"start": "python3 app.py", "port": 8000,
                          "requests": [{"path": "/egress", "expect": {"status": 200, "json": expected}}]}}
        result, execs = run_web(scenario_file, web_sandbox, [py(EGRESS_APP.format(targets=targets))],
                                checks=[check])
    assert result.status == "success", result.reason
    assert accepted == []  # nothing reached the host, on any of its interfaces
    events = [json.loads(line) for line in (result.run_dir / "events.jsonl").read_text().splitlines()]
    assert next(e for e in events if e["type"] == "sandbox")["network"] == "none"
    assert containers_under(workspaces) == []


FORK_APP = """# filename: app.py
import os
import time
from flask import Flask

app = Flask(__name__)


@app.get("/boom")
def boom():
    forked = 0
    while True:
        try:
            if os.fork() == 0:
                os.setsid()  # each child leaves the server's process group
                time.sleep(120)
                os._exit(0)
            forked += 1
        except OSError as exc:
            return {{"forked": forked, "refused": exc.strerror}}


if __name__ == "__main__":
    app.run(port=8000, threaded=True)
"""


def test_a_fork_bomb_in_a_request_handler_is_held_and_cleaned_up(scenario_file, web_sandbox, workspaces):
    check = {"http": {"start": "python3 app.py", "port": 8000,
                      "requests": [{"path": "/boom", "expect": {"status": 200,
                                                                "text": "Resource temporarily unavailable"}}]}}
    after = py(LEFTOVERS + "\nprint('still here', os.getuid())")
    result, execs = run_web(scenario_file, web_sandbox, [py(FORK_APP.format()), after, "TERMINATE"],
                            checks=[check], pids=256, termination={"contains": "TERMINATE"})
    checks = [c for e in execs for c in e["outcome"].get("checks") or []]
    assert checks and checks[0]["passed"], checks  # the handler's forks were refused at the pids limit
    out = execs[-1]["outcome"]["executions"][-1]["output"]
    assert "still here 1000" in out and "LEFTOVER 0" in out, out  # the check stopped every process it started
    assert containers_under(workspaces) == []


CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
"""Debian's chromium-headless-shell, in the frontend preset's image."""
BROWSER = """```sh
(setsid nohup {chromium} --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \\
  --user-data-dir=/tmp/{marker} --remote-debugging-port=9222 about:blank >/tmp/browser.log 2>&1 &)
sleep 3
ps -eo pid,args | grep -c '[{first}]{rest}' | sed 's/^/BROWSER PROCESSES /'
```"""


def test_a_browser_left_running_does_not_outlive_the_run(scenario_file, web_sandbox, workspaces):
    marker = f"codeduet-browser-{secrets.token_hex(6)}"
    reply = BROWSER.format(chromium=CHROMIUM, marker=marker, first=marker[0], rest=marker[1:])
    result, execs = run_web(scenario_file, web_sandbox, [reply])
    out = execs[0]["outcome"]["executions"][0]["output"]
    count = int(out.split("BROWSER PROCESSES ")[1].split()[0])
    assert count >= 1, out  # it was running when its block ended
    assert _host_processes_with(marker) == []
    assert containers_under(workspaces) == []
