"""The page's task box with a preset and acceptance checks: a typed backend task runs in the web image, an HTTP
check decides its success, and the scenario kept in the run folder says so. Driven in Debian's Chromium through its
WebDriver, the scripted model in place of the LLM, the real sandbox."""

from __future__ import annotations

import os
import shutil

import pytest
import yaml

from tests.test_hostile_web import web_sandbox  # noqa: F401  (the session fixture that builds the web image)
from tests.test_ui import Server, browser, by_id, shot, until  # noqa: F401  (browser: the WebDriver fixture)

pytestmark = [pytest.mark.docker,
              pytest.mark.skipif(not shutil.which("chromedriver"), reason="needs Debian's chromium-driver")]

APP = """```python
# filename: app.py
from flask import Flask, jsonify

app = Flask(__name__)
ITEMS = []


@app.get("/health")
def health():
    return jsonify(ok=True)


@app.post("/items")
def add():
    from flask import request
    ITEMS.append(request.get_json()["name"])
    return jsonify(name=ITEMS[-1]), 201


if __name__ == "__main__":
    app.run(port=8000)
```"""


def test_a_typed_backend_task_runs_in_the_web_image_and_its_http_check_decides(tmp_path, browser,  # noqa: F811
                                                                               web_sandbox):  # noqa: F811
    from selenium.webdriver.support.ui import Select

    table = tmp_path / "llm.yaml"
    table.write_text(yaml.safe_dump({"default": "scripted-web", "models": {"scripted-web": {
        "provider": "scripted", "replies": [APP]}}}))
    root, scenarios = tmp_path / "ws", tmp_path / "scenarios"
    root.mkdir()
    scenarios.mkdir()
    os.environ["CODEDUET_CONFIGS"] = str(table)
    try:
        server = Server(root, scenarios)
    finally:
        os.environ.pop("CODEDUET_CONFIGS")
    try:
        browser.get(f"{server.url}/new")
        by_id(browser, "task").send_keys("A Flask service on port 8000: GET /health, POST /items {name}.")
        Select(by_id(browser, "task-model")).select_by_value("scripted-web")
        Select(by_id(browser, "task-preset")).select_by_value("backend")
        by_id(browser, "server").send_keys("python3 app.py")
        by_id(browser, "port").send_keys("8000")
        by_id(browser, "requests").send_keys('GET /health -> 200 true\nPOST /items {"name": "milk"} -> 201 milk')
        by_id(browser, "start-task").click()
        until(browser, lambda d: "/run/typed/" in d.current_url)
        until(browser, lambda d: by_id(d, "live-status").text.lower() in ("success", "failed"), timeout=180)
        assert by_id(browser, "live-status").text.lower() == "success"
        shot(browser, tmp_path, "ui-typed-backend")
    finally:
        server.stop()
    run = next((root / "typed").iterdir())
    saved = yaml.safe_load((run / "scenario.yaml").read_text())
    assert saved["sandbox"] == {"session": "process", "preset": "backend"}
    http = saved["checks"][0]["http"]
    assert http["start"] == "python3 app.py" and [r["path"] for r in http["requests"]] == ["/health", "/items"]
