"""`codeduet ui` in a real browser: Debian's Chromium driven through its WebDriver (selenium with
/usr/bin/chromedriver),
a real `codeduet ui` server process, real runs (scripted model, Docker sandbox). Screenshots go to the test's tmp
folder (and, with CODEDUET_UI_SHOTS=DIR, to DIR)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from agents.record.transcript import load_transcript
from tests.conftest import IMAGE, ROOT, py
from tests.helpers import RUN_PY, free_port, run_cli, wait_for

pytestmark = [pytest.mark.docker,
              pytest.mark.skipif(not shutil.which("chromedriver"), reason="needs Debian's chromium-driver")]

EVIL = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


def write(folder: Path, name: str, replies: list[str], **extra) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = {"name": name, "task": extra.pop("task", "Print the answer."),
            "model": {"provider": "scripted", "replies": replies, **extra.pop("model", {})},
            "sandbox": {"image": IMAGE, "timeout": 20}, "strategy": {"attempts": 1}, **extra}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


class Server:
    def __init__(self, root: Path, scenarios: Path, *args: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([sys.executable, str(RUN_PY), "ui", "--port", str(self.port), "--workspace",
                                      str(root), "--scenarios", str(scenarios), *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wait_for(self.ready, timeout=30, proc=self.proc)

    def ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture
def site(tmp_path: Path):
    root, scenarios = tmp_path / "ws", tmp_path / "scenarios"
    root.mkdir()
    scenarios.mkdir()
    server = Server(root, scenarios)
    yield server, root, scenarios
    server.stop()


@pytest.fixture
def browser(tmp_path: Path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000",
                f"--user-data-dir={tmp_path / 'chrome-profile'}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


def shot(driver, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    driver.save_screenshot(str(path))
    if os.environ.get("CODEDUET_UI_SHOTS"):
        Path(os.environ["CODEDUET_UI_SHOTS"]).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(os.environ["CODEDUET_UI_SHOTS"]) / path.name)
    return path


def until(driver, condition, timeout: float = 60):
    """Wait for condition(driver); an element replaced meanwhile (the page reloaded, the timeline re-rendered) is
    looked up again on the next poll. Chromium reports such an element either as stale or, from 156 on, as an
    'unknown error' whose node 'does not belong to the document'."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def poll(d):
        try:
            return condition(d)
        except (NoSuchElementException, StaleElementReferenceException):
            return False
        except WebDriverException as error:
            if "does not belong to the document" in (error.msg or ""):
                return False
            raise

    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(poll)


def by_id(driver, element_id: str):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id)


def start_from_page(driver, server: Server, scenario: str, human: str = "never") -> None:
    from selenium.webdriver.support.ui import Select

    driver.get(f"{server.url}/new")
    Select(by_id(driver, "scenario")).select_by_value(scenario)
    Select(by_id(driver, "human")).select_by_value(human)
    by_id(driver, "start").click()
    until(driver, lambda d: "/run/" in d.current_url)


def test_a_run_started_from_the_page_is_watched_live_to_its_end(site, browser, tmp_path):
    server, root, scenarios = site
    write(scenarios, "live", [py("print(41)"), py("print(42)")], checks=[{"stdout_contains": "42"}],
          model={"delay_s": 1.5})
    start_from_page(browser, server, "live.yaml")
    seen_running = by_id(browser, "live-status").text.lower() == "running"
    until(browser, lambda d: len(d.find_elements("css selector", "#timeline article.msg")) >= 3)  # live, not reloaded
    shot(browser, tmp_path, "ui-run-live")
    until(browser, lambda d: by_id(d, "live-status").text.lower() == "success")
    assert seen_running
    assert len(browser.find_elements("css selector", "#timeline article.msg")) == 5
    browser.get(server.url + "/")
    rows = browser.find_elements("css selector", "#runs tbody tr")
    assert len(rows) == 1 and "success" in rows[0].text.lower() and "live" in rows[0].text
    shot(browser, tmp_path, "ui-runs")


def test_a_person_steers_from_the_page_and_two_tabs_see_the_same_prompt(site, browser, tmp_path):
    server, root, scenarios = site
    write(scenarios, "steered", [py("print(41)"), py("print(42)"), "All done. TERMINATE"],
          termination={"contains": "TERMINATE"})
    start_from_page(browser, server, "steered.yaml", human="always")
    run_url = browser.current_url
    until(browser, lambda d: by_id(d, "steer").is_displayed())
    assert "execute the proposed code" in by_id(browser, "steer-enter").text
    shot(browser, tmp_path, "ui-steer")
    first = browser.current_window_handle
    browser.switch_to.new_window("tab")
    browser.get(run_url)
    until(browser, lambda d: by_id(d, "steer").is_displayed())  # the second tab sees the same prompt
    second = browser.current_window_handle
    assert by_id(browser, "steer-n").get_attribute("value") == "1"
    browser.switch_to.window(first)
    by_id(browser, "steer-execute").click()  # approve one step
    # the click only starts the page's POST: wait until the server took it (the form hides, or the next prompt came)
    until(browser, lambda d: not by_id(d, "steer").is_displayed() or by_id(d, "steer-n").get_attribute("value") != "1")
    browser.switch_to.window(second)
    # every text the second tab's note shows is kept: the next prompt, arriving on its own time, clears the note
    browser.execute_script("""var note = document.getElementById('steer-note'); window.notes = [];
        new MutationObserver(function () { window.notes.push(note.textContent); })
            .observe(note, {childList: true, characterData: true, subtree: true});
        document.getElementById('steer-n').value = '1';  // still prompt 1 here, even if prompt 2 came meanwhile
        document.getElementById('steer-execute').click();""")  # too late: the first answer won
    until(browser, lambda d: any("already answered" in note for note in d.execute_script("return window.notes")))
    browser.switch_to.window(first)
    until(browser, lambda d: by_id(d, "steer").is_displayed() and by_id(d, "steer-n").get_attribute("value") == "2")
    by_id(browser, "steer-text").send_keys("Please print 42 instead.")
    by_id(browser, "steer-reply").click()  # a free-text reply to the assistant
    until(browser, lambda d: by_id(d, "steer").is_displayed() and by_id(d, "steer-n").get_attribute("value") == "3")
    by_id(browser, "steer-end").click()
    until(browser, lambda d: by_id(d, "live-status").text.lower() not in ("running", "interrupted"))
    run = next((root / "steered").iterdir())
    t = load_transcript(run)
    humans = [m["content"] for m in t["messages"] if m["role"] == "human"]
    assert humans == ["Please print 42 instead."], [(m["role"], m["content"][:40]) for m in t["messages"]]
    executions = [m for m in t["messages"] if m["role"] == "execution"]
    assert len(executions) == 1 and "41" in executions[0]["content"]  # approved once; replaced by the reply after
    shown = run_cli("replay", str(run))  # recorded the way a terminal answer is: replay shows it
    assert "Please print 42 instead." in shown.stdout and "human" in shown.stdout


def test_two_runs_compared_side_by_side(site, browser, tmp_path):
    server, root, scenarios = site
    a = write(scenarios, "cmp", [py("open('out.txt', 'w').write('one')\nprint('one')")])
    first = json.loads(run_cli("run", str(a), "--workspace", str(root), "--json").stdout)
    write(scenarios, "cmp", [py("open('out.txt', 'w').write('two')\nprint('two')")])
    second = json.loads(run_cli("run", str(a), "--workspace", str(root), "--json").stdout)
    ids = [f"cmp/{Path(r['run_dir']).name}" for r in (first, second)]
    browser.get(f"{server.url}/compare")
    by_id(browser, "compare-a").send_keys(ids[0])
    by_id(browser, "compare-b").send_keys(ids[1])
    by_id(browser, "compare").click()
    until(browser, lambda d: d.find_elements("id", "compare-table"))
    table = by_id(browser, "compare-table").text
    assert "write('one')" in table and "write('two')" in table and "turn 1" in table
    diff = by_id(browser, "workspace-diff").text
    assert "-one" in diff and "+two" in diff
    shot(browser, tmp_path, "ui-compare")


def test_the_run_page_escapes_what_the_task_the_reply_and_the_output_hold(site, browser, tmp_path):
    server, root, scenarios = site
    path = write(scenarios, "evil", [f"{EVIL}\n" + py(f"print({EVIL!r})")], task=f"Print this: {EVIL}")
    run = Path(json.loads(run_cli("run", str(path), "--workspace", str(root), "--json").stdout)["run_dir"])
    browser.get(f"{server.url}/run/evil/{run.name}")
    until(browser, lambda d: d.find_elements("css selector", "#timeline article.msg"))
    time.sleep(0.5)  # the page's own refresh has run (an onerror would have fired by now)
    assert browser.execute_script("return window.pwned === undefined")
    assert not browser.find_elements("css selector", "#body script, #body img, #timeline img[onerror]")
    text = by_id(browser, "body").text
    assert text.count("<script>window.pwned = 1</script>") >= 3  # task, reply, output: shown as text
    browser.get(server.url + "/")
    assert browser.execute_script("return window.pwned === undefined")


def test_a_shell_block_shows_as_a_run_with_its_command(site, browser, tmp_path):
    server, root, scenarios = site
    reply = ("```python\n# filename: hello.py\nimport sys\nprint('hello', *sys.argv[1:])\n```\n"
             "```sh\npython hello.py world\n```\n```javascript\nconsole.log('hello')\n```")
    path = write(scenarios, "shell", [reply])
    run = Path(json.loads(run_cli("run", str(path), "--workspace", str(root), "--json").stdout)["run_dir"])
    browser.get(f"{server.url}/run/shell/{run.name}")
    heads = until(browser, lambda d: [(h.get_attribute("data-language"), h.text)  # read at once: the page refreshes
                                      for h in d.find_elements("css selector", "#timeline .exec-head")])
    assert [lang for lang, _ in heads] == ["python", "sh"]
    assert heads[1][1].startswith("✔ $ python hello.py world (block01.sh) · exit 0")
    assert until(browser, lambda d: "```javascript block not run" in by_id(d, "timeline").text)
    shot(browser, tmp_path, "shell-run")


def get(url: str, headers: dict | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_beyond_localhost_every_request_needs_the_token(tmp_path):
    (tmp_path / "ws").mkdir()
    refused = run_cli("ui", "--host", "0.0.0.0", "--workspace", str(tmp_path / "ws"), timeout=30)
    assert refused.returncode == 2 and refused.stderr.startswith("error: --host 0.0.0.0 is reachable")
    server = Server(tmp_path / "ws", tmp_path, "--host", "0.0.0.0", "--token", "s3cret")
    try:
        for page in ("/", "/new", "/compare", "/run/a/b", "/static/app.js", "/run/a/b/events"):
            assert get(server.url + page)[0] == 401, page
            assert get(server.url + page, {"Authorization": "Bearer wrong"})[0] == 401, page
        assert get(server.url + "/", {"Authorization": "Bearer s3cret"})[0] == 200
    finally:
        server.stop()


def test_a_traversal_in_a_run_id_is_404(site):
    server, root, scenarios = site
    (root / "x" / "20261124-000000-abcdef").mkdir(parents=True)
    (root / "x" / "20261124-000000-abcdef" / "events.jsonl").write_text("")
    for bad in ("/run/..%2F..%2Fetc/passwd", "/run/x/..%2F..%2F..%2Fetc", "/run/x/%2e%2e", "/run/..%2Fx/abc",
                "/run/x/20261124-000000-abcdef%2F..%2F..", "/run/x/20261124-000000-abcdef/..%2F..%2Fevents"):
        assert get(server.url + bad)[0] == 404, bad
    assert get(server.url + "/run/x/20261124-000000-abcdef")[0] == 200


def test_a_post_from_another_site_or_without_the_csrf_token_is_refused(site):
    server, root, scenarios = site
    write(scenarios, "p", [py("print(1)")])
    request = urllib.request.Request(server.url + "/new", data=b"scenario=p.yaml", method="POST",
                                     headers={"Origin": "http://evil.example"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 403
    request = urllib.request.Request(server.url + "/new", data=b"scenario=p.yaml", method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 403 and not (root / "p").exists()


def test_stop_a_run_from_the_page_then_re_execute_and_download_a_finished_one(site, browser, tmp_path):
    server, root, scenarios = site
    write(scenarios, "slow", [py("print(1)")], model={"delay_s": 60})
    start_from_page(browser, server, "slow.yaml")
    until(browser, lambda d: by_id(d, "live-status").text.lower() == "running")
    by_id(browser, "stop").click()  # Ctrl-C for the run: it saves everything and ends as interrupted
    until(browser, lambda d: by_id(d, "live-status").text.lower() == "interrupted", timeout=30)
    stopped = next((root / "slow").iterdir())
    assert load_transcript(stopped)["status"] == "interrupted" and (stopped / "transcript.json").is_file()

    done = write(scenarios, "done", [py("print(6 * 7)")])
    run = Path(json.loads(run_cli("run", str(done), "--workspace", str(root), "--json").stdout)["run_dir"])
    browser.get(f"{server.url}/run/done/{run.name}")
    by_id(browser, "reexecute").click()  # replay --execute in the background, its output followed live
    until(browser, lambda d: "/job/" in d.current_url)
    until(browser, lambda d: by_id(d, "job-status").text.lower() == "exit 0", timeout=120)
    assert "1 block(s): 1 match, 0 diverged" in by_id(browser, "job-log").text
    status, page = get(f"{server.url}/run/done/{run.name}/export.html")
    assert status == 200 and page.startswith("<!DOCTYPE html>") and "block01.py" in page and "42" in page
    request = urllib.request.Request(f"{server.url}/run/done/{run.name}/download.zip")
    with urllib.request.urlopen(request, timeout=30) as response:
        import io
        import zipfile

        names = zipfile.ZipFile(io.BytesIO(response.read())).namelist()
    assert f"{run.name}/transcript.json" in names and f"{run.name}/workspace/block01.py" in names


def test_the_reply_of_a_run_started_from_the_cli_streams_into_its_page(site):
    """A run in a terminal (here a pipe) keeps the reply being generated in its run folder; the page's event
    stream carries it token by token, before the message is complete."""
    server, root, scenarios = site
    reply = "Here is the plan.\nFirst this line.\nThen that one.\n" + py("print(6 * 7)")
    path = write(scenarios, "streamed", [reply], model={"line_delay_s": 0.4})
    proc = subprocess.Popen([sys.executable, str(RUN_PY), "run", str(path), "--workspace", str(root)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        run = wait_for(lambda: next(iter((root / "streamed").glob("*/events.jsonl")), None), proc=proc).parent
        partial = []
        with urllib.request.urlopen(f"{server.url}/run/streamed/{run.name}/events", timeout=60) as stream:
            event = None
            for raw in stream:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "tokens" and json.loads(line[6:]):
                    partial.append(json.loads(line[6:]))
                elif event == "end":
                    break
        assert partial and any(p != reply for p in partial)  # seen while it was being written
        assert all(reply.startswith(p) for p in partial) and "Here is the plan." in partial[0]
    finally:
        proc.wait(timeout=60)
    assert load_transcript(run)["status"] == "success"


def test_a_runs_candidates_are_listed_collapsed_on_its_page_and_open_on_a_click(site, browser, tmp_path):
    server, root, scenarios = site
    write(scenarios, "cands", [py("print(41)"), py("print(42)"), "TERMINATE"], checks=[{"stdout_contains": "42"}],
          strategy={"attempts": 1, "candidates": 2})
    start_from_page(browser, server, "cands.yaml")
    until(browser, lambda d: by_id(d, "live-status").text.lower() == "success")  # the timeline stops re-rendering
    group = "#timeline details.candidates"
    assert "2 candidates for attempt 1 turn 1: candidate 2 chosen" in until(
        browser, lambda d: d.find_element("css selector", group).text)
    items = f"{group} details.candidate"
    assert until(browser, lambda d: [e.is_displayed() for e in d.find_elements("css selector", items)]) == [
        False, False]  # collapsed until the group is opened

    def opened(d):  # looked up afresh on each try: the timeline may render once more (closed) after the run's end
        if d.find_element("css selector", group).get_attribute("open") is None:
            d.find_element("css selector", f"{group} > summary").click()
            return False
        texts = [e.text for e in d.find_elements("css selector", items) if e.is_displayed()]
        return texts if len(texts) == 2 else False
    texts = until(browser, opened)
    assert "(chosen)" in texts[1] and "(chosen)" not in texts[0]
    shot(browser, tmp_path, "ui-candidates")


def test_a_chart_a_run_drew_shows_on_its_page_with_the_table_of_its_dataframe(site, browser, tmp_path):
    server, root, scenarios = site
    steps = [py("import pandas as pd\nsales = pd.DataFrame({'region': ['North', 'South'], 'revenue': [12.5, 7.0]})\n"
                "sales"),
             py("import matplotlib.pyplot as plt\nsales.plot.bar(x='region', y='revenue', title='Revenue by region')\n"
                "plt.show()\nprint('drawn')")]
    path = write(scenarios, "chart", steps, checks=[{"stdout_contains": "drawn"}],
                 sandbox={"image": IMAGE, "timeout": 20, "session": "kernel"})
    run = Path(json.loads(run_cli("run", str(path), "--workspace", str(root), "--json").stdout)["run_dir"])
    browser.get(f"{server.url}/run/chart/{run.name}")
    seen = until(browser, lambda d: d.execute_script(  # read at once: the page refreshes its timeline
        "const i = document.querySelector('#timeline figure.figure img');"
        "if (!i || !i.complete || !i.naturalWidth) return null;"
        "return {size: [i.naturalWidth, i.naturalHeight],"
        "        caption: document.querySelector('#timeline figure.figure figcaption').textContent,"
        "        cells: [...document.querySelectorAll('#timeline .value-table td')].map(c => c.textContent)};"))
    assert seen["size"] == [640, 480]
    assert seen["caption"].startswith("figures/block02-1.png (640x480 px") and "Revenue by region" in seen["caption"]
    assert seen["cells"] == ["North", "12.5", "South", "7.0"]
    browser.execute_script("document.querySelector('#timeline figure.figure').scrollIntoView()")
    shot(browser, tmp_path, "ui-chart")


def test_a_task_typed_into_the_page_runs_as_a_team_to_its_end_and_replays_from_the_cli(tmp_path, browser):
    """The typed-task box: a task, a file, the team and the scripted model of a model table; the run's page shows
    every role, and the scenario it wrote into the run folder runs again from the command line."""
    plan = "1. Read the numbers.\n2. Print their sum."
    first = py("total = sum(int(x) for x in open('numbers.txt').read().split())\nprint('sum', total / 0)")
    hypothesis = "The division by zero on the print line crashes it; print the total itself."
    fixed = py("print('sum', sum(int(x) for x in open('numbers.txt').read().split()))")
    table = tmp_path / "llm.yaml"
    table.write_text(yaml.safe_dump({"default": "scripted-demo", "models": {"scripted-demo": {
        "provider": "scripted", "replies": [plan, first, hypothesis, fixed]}}}))
    numbers = tmp_path / "numbers.txt"
    numbers.write_text("3 4 5\n")
    root, scenarios = tmp_path / "ws", tmp_path / "scenarios"
    root.mkdir()
    scenarios.mkdir()
    old = os.environ.get("CODEDUET_CONFIGS")
    os.environ["CODEDUET_CONFIGS"] = str(table)
    try:
        server = Server(root, scenarios)
    finally:
        os.environ.pop("CODEDUET_CONFIGS") if old is None else os.environ.__setitem__("CODEDUET_CONFIGS", old)
    try:
        from selenium.webdriver.support.ui import Select

        browser.get(f"{server.url}/new")
        by_id(browser, "task").send_keys("Print the sum of the numbers in numbers.txt as `sum N`.")
        by_id(browser, "files").send_keys(str(numbers))
        Select(by_id(browser, "task-model")).select_by_value("scripted-demo")
        Select(by_id(browser, "setup")).select_by_value("team")
        by_id(browser, "max-seconds").send_keys("120")
        by_id(browser, "start-task").click()
        until(browser, lambda d: "/run/typed/" in d.current_url)
        until(browser, lambda d: by_id(d, "live-status").text.lower() in ("success", "failed"))
        roles = until(browser, lambda d: d.execute_script(
            "return [...document.querySelectorAll('#timeline article.msg')].map(a => a.dataset.role)"))
        assert roles[:2] == ["planner", "task"] and "qa" in roles and roles.count("assistant") == 2, roles
        assert by_id(browser, "live-status").text.lower() == "success"
        shot(browser, tmp_path, "ui-typed-team")
    finally:
        server.stop()
    run = next((root / "typed").iterdir())
    saved = yaml.safe_load((run / "scenario.yaml").read_text())
    assert saved["team"] == ["planner", "developer", "qa"] and saved["files"] == {"numbers.txt": "3 4 5\n"}
    assert saved["strategy"] == {"max_seconds": 120}
    again = run_cli("run", str(run / "scenario.yaml"), "--workspace", str(tmp_path / "again"), "--json",
                    env={"CODEDUET_CONFIGS": str(table)})
    assert json.loads(again.stdout.strip().splitlines()[-1])["status"] == "success"
    shown = run_cli("replay", str(run))
    assert "--- planner · planner" in shown.stdout and "--- qa · qa" in shown.stdout


def test_a_page_checks_screenshot_shows_on_the_runs_page_and_in_its_html_export(site, browser, tmp_path):
    """The frontend scenario's reference page (in the frontend preset's sandbox): the page check's screenshot is an
    image loaded under the check, on the live page and in the export."""
    server, root, scenarios = site
    data = yaml.safe_load((ROOT / "scenarios" / "frontend_filter_list.yaml").read_text(encoding="utf-8"))
    data["model"] = {"provider": "scripted", "replies": [
        (ROOT / "scenarios" / "reference" / "frontend_filter_list.md").read_text(encoding="utf-8")]}
    path = scenarios / "fruit.yaml"
    path.write_text(yaml.safe_dump({**data, "name": "fruit"}, sort_keys=False), encoding="utf-8")
    run = Path(json.loads(run_cli("run", str(path), "--workspace", str(root), "--json").stdout)["run_dir"])
    loaded = ("const i = document.querySelector('ul.checks li.pass figure.figure img');"
              "if (!i || !i.complete || !i.naturalWidth) return null;"
              "return {size: [i.naturalWidth, i.naturalHeight],"
              "        caption: i.closest('figure').querySelector('figcaption').textContent};")
    for url, name in ((f"{server.url}/run/fruit/{run.name}", "ui-page-check"),
                      (f"{server.url}/run/fruit/{run.name}/export.html", "export-page-check")):
        browser.get(url)
        seen = until(browser, lambda d: d.execute_script(loaded))
        assert seen["size"] == [800, 600] and seen["caption"].startswith("figures/page-1-1.png (800x600 px"), seen
        browser.execute_script("document.querySelector('ul.checks').scrollIntoView()")
        shot(browser, tmp_path, name)
