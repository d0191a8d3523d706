"""The `page:` check with the local executor (fast: the host's Debian Chromium speaks the same DevTools protocol as
the image's chromium-headless-shell): steps run in order, the report names the failed step with expected against
actual, a selector that matched nothing and the page's errors; a started server's page; the screenshot kept as the
check's figure, shown in the terminal and the HTML export; nothing of the browser left running."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from agents.loop.errors import ScenarioError
from agents.loop.protocols import ExecResult
from agents.record.display import outcome_text
from agents.replay.html import checks_html
from agents.sandbox.config import SandboxConfig
from agents.sandbox.local_executor import LocalExecutor
from agents.scenario.check_page import PageCheck
from agents.scenario.checks import run_checks
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT
from tests.helpers import free_port

LIST = """<!doctype html><html><head><title>Todo</title></head><body><h1>Todo</h1>
<input id="name"><button id="add">Add</button><ul id="items"><li>bread</li><li hidden>eggs</li></ul>
<script>
document.getElementById('add').addEventListener('click', () => {
  const li = document.createElement('li');
  li.textContent = document.getElementById('name').value;
  document.getElementById('items').appendChild(li);
});
</script></body></html>"""


def run(workspace: Path, page: dict, files: dict[str, str] | None = None):
    """One page check against the workspace with the local executor: its CheckResult."""
    for name, text in (files if files is not None else {"index.html": LIST}).items():
        (workspace / name).write_text(text, encoding="utf-8")
    check = PageCheck.model_validate({"page": page})
    return run_checks([check], workspace, LocalExecutor(SandboxConfig(kind="local", timeout=60), workspace),
                      ExecResult(0, "", 0.0))[0]


def browsers_of(workspace: Path) -> list[int]:
    """Processes still running with a page check's browser profile, started in `workspace` (another test's page
    check, on the other xdist worker, is not this one's)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            cwd = os.readlink(f"/proc/{pid}/cwd")
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        except OSError:
            continue
        if b"codeduet-page-" in cmdline and state != "Z" and Path(cwd).is_relative_to(workspace):
            pids.append(int(pid))
    return pids


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_steps_pass_in_order_and_the_screenshot_is_the_checks_figure(tmp_path):
    result = run(tmp_path, {"open": "index.html", "viewport": [640, 400], "steps": [
        {"exists": "ul#items li"}, {"text": {"selector": "h1", "equals": "Todo"}},
        {"count": {"selector": "#items li", "equals": 1}},  # the hidden one is not shown
        {"type": {"selector": "#name", "text": "milk"}}, {"click": "#add"},
        {"text": {"selector": "#items li:last-child", "contains": "mil"}},
        {"count": {"selector": "#items li", "equals": 2}}]})
    assert result.passed, result.detail
    assert result.name == "page: 'index.html' (7 steps)"
    [figure] = result.figures
    assert figure["path"] == "figures/page-1-1.png" and (figure["width"], figure["height"]) == (640, 400)
    assert (tmp_path / "figures/page-1-1.png").read_bytes().startswith(b"\x89PNG")
    assert not browsers_of(tmp_path)


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_failed_step_is_named_with_expected_against_actual_and_the_steps_after_it_do_not_run(tmp_path):
    result = run(tmp_path, {"open": "index.html", "steps": [
        {"type": {"selector": "#name", "text": "milk"}}, {"click": "#add"},
        {"text": {"selector": "#items li:last-child", "equals": "Milk"}}, {"click": "#add"}]})
    assert not result.passed and (result.tests_passed, result.tests) == (2, 4)  # steps rank replies as tests do
    assert result.detail.splitlines()[0] == (
        'step 3 text of "#items li:last-child": expected "Milk", got "milk" (2 steps before it passed; '
        '1 after it not run)')
    assert result.figures[0]["path"] == "figures/page-1-1.png"  # the page as it was when the step failed
    again = run(tmp_path, {"open": "index.html"})  # the next reply's check: its own screenshot, the first kept
    assert again.figures[0]["path"] == "figures/page-1-2.png" and (tmp_path / "figures/page-1-1.png").is_file()


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_selector_that_matches_nothing_is_said_and_the_pages_errors_are_listed(tmp_path):
    broken = LIST.replace("document.getElementById('add')", "document.getElementById('plus')")
    broken = broken.replace("</body>", "<script src='app.js'></script><script>console.error('no items')</script>"
                                       "</body>")
    result = run(tmp_path, {"open": "index.html", "steps": [{"click": "#plus"}]}, {"index.html": broken})
    assert not result.passed
    lines = result.detail.splitlines()
    assert lines[0] == 'step 1 click "#plus": no element matches "#plus" (the first step)'
    assert re.search(r"^- TypeError: Cannot read properties of null \(reading 'addEventListener'\) "
                     r"\(index.html:\d+\)$", result.detail, re.MULTILINE), result.detail
    assert "- console.error: no items" in lines
    assert any(line.startswith("- Failed to load resource: net::ERR_FILE_NOT_FOUND") and "app.js" in line
               for line in lines)


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_selector_that_is_not_css_is_said(tmp_path):
    steps = [{"exists": "h1"}, {"count": {"selector": "li[", "equals": 1}}]
    result = run(tmp_path, {"open": "index.html", "steps": steps})
    assert result.detail.startswith('step 2: the selector "li[" is not valid CSS (SyntaxError: Failed to execute '
                                    "'querySelectorAll' on 'Document': 'li[' is not a valid selector.) (1 step before "
                                    "it passed)"), result.detail


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_an_alert_is_accepted_and_named_in_the_report(tmp_path):
    page = LIST.replace("const li", "if (!document.getElementById('name').value) { alert('Name is required'); return; }"
                                    "\n  const li")
    result = run(tmp_path, {"open": "index.html", "steps": [
        {"click": "#add"}, {"text": {"selector": "#error", "equals": "Name is required"}}]}, {"index.html": page})
    assert result.detail.splitlines()[0].startswith('step 2 text of "#error": no element matches "#error"')
    assert result.detail.splitlines()[-1] == (
        '- alert("Name is required"): a dialog, accepted by the check (the steps read the page\'s own text)')


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_form_whose_submit_reloads_the_page_is_said_so(tmp_path):
    form = ("<form id='f'><input id='name' name='name'><button id='go'>Sign up</button></form><p id='msg'></p>"
            "<script>document.getElementById('f').addEventListener('submit', () => "
            "{ document.getElementById('msg').textContent = 'Thanks'; });</script>")
    result = run(tmp_path, {"open": "index.html", "steps": [
        {"type": {"selector": "#name", "text": "ann"}}, {"click": "#go"},
        {"text": {"selector": "#msg", "equals": "Thanks"}}]}, {"index.html": form})
    assert result.detail.splitlines() == [
        'step 3 text of "#msg": expected "Thanks", got "" (2 steps before it passed)',
        'step 2 (click "#go") loaded another page, index.html?name=ann: a form\'s submit does so unless its handler '
        "calls event.preventDefault()"]
    fixed = run(tmp_path, {"open": "index.html", "steps": [
        {"type": {"selector": "#name", "text": "ann"}}, {"click": "#go"},
        {"text": {"selector": "#msg", "equals": "Thanks"}}]},
        {"index.html": form.replace("() => {", "(event) => { event.preventDefault();")})
    assert fixed.passed, fixed.detail


def test_a_page_that_does_not_exist_names_the_files_there(tmp_path):
    result = run(tmp_path, {"open": "app.html", "steps": [{"exists": "h1"}]})
    assert not result.passed and result.figures == []
    assert result.detail == "app.html does not exist in the workspace (it holds: index.html)"


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_page_on_a_started_server_and_a_server_that_never_listens(tmp_path):
    port = free_port()
    served = run(tmp_path, {"open": "/", "start": f"python3 -m http.server {port} --bind 127.0.0.1", "port": port,
                            "steps": [{"text": {"selector": "h1", "equals": "Todo"}}]})
    assert served.passed, served.detail
    failed = run(tmp_path, {"open": "/", "start": "echo 'cannot bind' && exit 3", "port": port})
    assert not failed.passed and failed.figures == []
    assert failed.detail.startswith(f"the server (`echo 'cannot bind' && exit 3`) exited with 3 before it listened on "
                                    f"port {port}\nthe server's log")
    assert failed.detail.endswith("cannot bind")
    assert not browsers_of(tmp_path)


def test_the_screenshot_shows_in_the_terminal_and_in_the_html_export(tmp_path):
    result = run(tmp_path, {"open": "index.html"})
    check = result.to_dict()
    assert outcome_text({"checks": [check]}).plain == (
        "✔ check page: 'index.html' (0 steps)\n"
        f"  🖼 screenshot figures/page-1-1.png (800x600 px, {check['figures'][0]['size'] / 1024:.1f} KiB; "
        "title: page index.html)\n")
    html = checks_html([check], tmp_path)
    assert '<figure class="figure" data-path="figures/page-1-1.png"><img src="data:image/png;base64,' in html


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_reference_page_of_the_frontend_scenario_passes(tmp_path):
    scenario = load_scenario(ROOT / "scenarios" / "frontend_filter_list.yaml")
    reply = (ROOT / "scenarios" / "reference" / "frontend_filter_list.md").read_text(encoding="utf-8")
    page = re.search(r"```html\n<!-- filename: index.html -->\n(.*?)```", reply, re.DOTALL).group(1)
    (tmp_path / "index.html").write_text(page, encoding="utf-8")
    [result] = run_checks(scenario.checks, tmp_path, LocalExecutor(SandboxConfig(kind="local"), tmp_path),
                          ExecResult(0, "", 0.0))
    assert result.passed, result.detail


@pytest.mark.parametrize("page, error", [
    ({"open": "/", "start": "node server.js"}, "start: and port: go together"),
    ({"open": "../index.html"}, "must be a file of the workspace"),
    ({"open": "index.html", "steps": [{"text": {"selector": "h1"}}]}, "exactly one of equals: or contains:"),
    ({"open": "index.html", "steps": [{"hover": "h1"}]}, "a step is one of: exists, text, count, click, type"),
    ({"open": "index.html", "viewport": [20, 20]}, "100 to 4000 pixels"),
])
def test_a_wrong_page_check_is_one_line_at_load(tmp_path, page, error):
    path = tmp_path / "s.yaml"
    path.write_text(f"name: s\ntask: t\nchecks:\n  - page: {page!r}\n".replace("'", '"'), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert error in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_page_whose_script_never_ends_is_reported_as_such_and_its_browser_is_stopped(tmp_path):
    endless = "<html><body><h1>x</h1><script>while (true) {}</script></body></html>"
    result = run(tmp_path, {"open": "index.html", "steps": [{"exists": "h1"}]}, {"index.html": endless})
    assert not result.passed
    assert result.detail == ("the page stopped answering: its scripts kept it busy for 12 s (an endless loop?), so "
                             "nothing more could be checked")
    assert not browsers_of(tmp_path)


def test_a_page_check_in_a_sandbox_without_a_browser_is_one_line_at_load(tmp_path):
    path = tmp_path / "s.yaml"
    for sandbox, loads in (("{}", False), ("{preset: frontend}", True), ("{preset: web}", True),
                           ("{packages: {debian: [chromium]}}", True), ("{kind: local}", True),
                           ("{image: my-browser-image}", True)):
        path.write_text(f"name: s\ntask: t\nsandbox: {sandbox}\nchecks:\n  - page: {{open: index.html}}\n")
        if loads:
            load_scenario(path)
            continue
        with pytest.raises(ScenarioError) as caught:
            load_scenario(path)
        assert str(caught.value) == (f"{path}:4: checks: a page check needs a browser in the sandbox: add `preset: "
                                     "frontend` (or web) to sandbox:")


def test_a_page_sent_without_its_file_name_is_asked_for_with_it(tmp_path):
    from agents.loop.run_reply import run_reply
    from agents.scenario.spec import Scenario

    scenario = Scenario.model_validate({"name": "s", "task": "t", "sandbox": {"kind": "local"}})
    outcome = run_reply("```html\n<h1>Fruit</h1>\n```", scenario, LocalExecutor(scenario.sandbox, tmp_path))
    assert outcome.kind == "unsupported" and outcome.feedback == (
        "Nothing was saved: your reply had a ```html block without a file name, and a page is a file the checks open. "
        "Send the whole file in its own ```html block whose first line names it: `<!-- filename: index.html -->`.")
    saved = run_reply("```html\n<!-- filename: index.html -->\n<h1>Fruit</h1>\n```", scenario,
                      LocalExecutor(scenario.sandbox, tmp_path))
    assert saved.kind == "executed" and (tmp_path / "index.html").read_text() == "<h1>Fruit</h1>\n"
