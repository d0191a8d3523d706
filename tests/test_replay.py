"""Replay of saved runs through the real CLI: show, --execute with a divergence report, --html in chromium, --resume."""

from __future__ import annotations

import base64
import fcntl
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pexpect
import pytest
from rich.console import Console

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.replay.execute import normalize
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT, py
from tests.helpers import plain, run_cli, sandbox_runs, wait_for

RUN_PY = str(ROOT / "run.py")
SCREENSHOT = Path("/tmp/codeduet-html-screenshot.png")
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")






def record(path: Path) -> Path:
    """Run a scenario for real (scripted model, Docker sandbox) and return its run folder."""
    return run_scenario(load_scenario(path), RunOptions()).run_dir


@pytest.fixture
def repaired_run(sandbox_image, workspaces, scenario_file) -> Path:
    """A failing block, then the fix, with a check: the shape of a typical saved run."""
    return record(scenario_file([py("print(sum(range(10)) / 0)"), py("print(sum(range(10)))")], name="demo",
                                description="a failing block, then the fix", checks=[{"stdout_contains": "45"}]))


# -- reading back strictly ----------------------------------------------------------------------
def test_normalize_drops_run_specific_noise():
    out = "x at 0x7f3a2b1c0d10 in /tmp/tmpab12_c/f.py\n/run/dir/workspace/a.txt took 0.532s  \n\n"
    assert normalize(out, ["/run/dir/workspace", "/run/dir"]) == ["x at 0x… in <tmp>/f.py", "<run>/a.txt took <time>"]


def test_neither_transcript_nor_event_log_is_a_one_line_error(tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    for target in (junk, tmp_path / "missing"):
        proc = run_cli("replay", str(target))
        assert proc.returncode == 2
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("error:")


@pytest.mark.docker
def test_other_format_or_truncated_transcript_falls_back_to_events(repaired_run):
    transcript = repaired_run / "transcript.json"
    data = json.loads(transcript.read_text())
    transcript.write_text(json.dumps({**data, "format": "codeduet.transcript/0"}))
    proc = run_cli("replay", str(repaired_run))
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and "codeduet.transcript/0" in proc.stderr
    assert "recovered from events.jsonl" in proc.stdout and "success" in proc.stdout
    raw = json.dumps(data)
    transcript.write_text(raw[: len(raw) // 2])
    proc = run_cli("replay", str(transcript))
    assert proc.returncode == 0 and "truncated" in proc.stderr
    assert "ZeroDivisionError" in proc.stdout


@pytest.mark.docker
def test_kill_9_mid_run_is_recovered_as_interrupted(sandbox_image, workspaces, scenario_file):
    path = scenario_file([py("print('partial', flush=True)"), py("import time\ntime.sleep(60)")], name="killed",
                         sandbox={"timeout": 90}, termination={"contains": "TERMINATE"})
    child = pexpect.spawn(sys.executable, [RUN_PY, "run", str(path)], env=dict(os.environ), encoding="utf-8",
                          timeout=60)
    child.expect("block01.py exit=0")  # the first block's report
    child.expect("running block 1/1")  # the second reply's block is sent...
    wait_for(lambda: sandbox_runs(workspaces, "block02.py"))  # ...and runs
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)
    run_dir = next((workspaces / "killed").iterdir())
    try:
        assert not (run_dir / "transcript.json").exists()
        proc = run_cli("replay", str(run_dir))
        assert proc.returncode == 0
        assert "missing; recovered" in proc.stderr and "interrupted" in proc.stdout and "partial" in proc.stdout
    finally:
        subprocess.run(["docker", "rm", "-f", f"codeduet-{run_dir.name}"], capture_output=True)


# -- show -----------------------------------------------------------------------------------------
@pytest.mark.docker
def test_show_renders_speaker_time_code_output_checks(repaired_run):
    proc = run_cli("replay", str(repaired_run))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for text in ("demo", "a failing block, then the fix", "assistant · assistant", "user_proxy · execution",
                 "print(sum(range(10)) / 0)", "ZeroDivisionError", "block01.py exit=1", "check stdout_contains",
                 "success", "2 turns · 2 executions · 1 failed"):
        assert text in out, text
    offsets = re.findall(r"\d\d:\d\d:\d\d \+(\d+\.\d)s", out)  # each message: clock time, seconds since start
    assert len(offsets) >= 4 and [float(x) for x in offsets] == sorted(float(x) for x in offsets)


@pytest.mark.docker
def test_show_step_waits_for_enter(repaired_run):
    child = pexpect.spawn(sys.executable, [RUN_PY, "replay", str(repaired_run), "--step"], env=dict(os.environ),
                          encoding="utf-8", timeout=30, dimensions=(60, 120))
    child.expect("message 2/5")
    assert "print(sum(range(10)) / 0)" not in plain(child.before)  # the assistant's message waits for Enter
    child.sendline("")
    child.expect("message 3/5")
    assert "print(sum(range(10)) / 0)" in plain(child.before)
    child.sendline("q")  # the rest at once
    child.expect(pexpect.EOF)
    assert "block02.py exit=0" in plain(child.before)
    child.close()
    assert child.exitstatus == 0


# -- execute --------------------------------------------------------------------------------------
@pytest.mark.docker
def test_execute_reports_match_for_every_block(repaired_run):
    proc = run_cli("replay", str(repaired_run), "--execute")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "✔ match     block01.py" in proc.stdout and "✔ match     block02.py" in proc.stdout
    assert "2 block(s): 2 match, 0 diverged" in proc.stdout
    assert not list(Path(tempfile.gettempdir()).glob("codeduet-replay-*/block01.py"))  # fresh copy, removed


@pytest.mark.docker
def test_execute_reports_divergence_after_a_changed_file(sandbox_image, workspaces, scenario_file):
    path = scenario_file([py("n = int(open('n.txt').read())\nprint('double:', 2 * n)")], name="files",
                         files={"n.txt": "21\n"}, checks=[{"stdout_contains": "42"}])
    run_dir = record(path)
    transcript = run_dir / "transcript.json"
    data = json.loads(transcript.read_text())
    assert run_cli("replay", str(run_dir), "--execute").returncode == 0
    data["scenario"]["files"]["n.txt"] = "20\n"  # the sandbox's starting workspace changed
    transcript.write_text(json.dumps(data))
    proc = run_cli("replay", str(run_dir), "--execute")
    print(proc.stdout)
    assert proc.returncode == 1
    assert "✘ diverged  block01.py" in proc.stdout
    assert "output differs" in proc.stdout and "checks stdout_contains: '42': pass -> fail" in proc.stdout
    assert "-double: 42" in proc.stdout and "+double: 40" in proc.stdout
    assert "1 block(s): 0 match, 1 diverged" in proc.stdout


@pytest.mark.docker
def test_execute_with_missing_image_is_an_environment_error(repaired_run):
    proc = run_cli("replay", str(repaired_run), "--execute", "--image", "codeduet-no-such-image:0")
    assert proc.returncode == 3
    assert "codeduet-no-such-image:0 not found" in proc.stderr


def test_options_that_need_another_option_are_rejected(tmp_path):
    proc = run_cli("replay", str(tmp_path), "--image", "x")
    assert proc.returncode == 2 and "--image only applies with --execute" in proc.stderr


def test_a_runs_time_reads_alike_in_the_replay_header_the_runs_list_and_the_web_ui():
    from agents.replay.show import totals_label
    from agents.replay.timeline import duration
    from agents.ui.runs import RunRow

    assert [duration(s) for s in (None, 0.04, 11.04, 59.96, 387.465, 3599.6, 7500)] == [
        "", "0.0 s", "11.0 s", "1 min 0 s", "6 min 27 s", "1 h 0 min", "2 h 5 min"]
    assert totals_label({"totals": {"seconds": 387.465}}).endswith(" · 6 min 27 s")
    assert RunRow("s", "r", Path("."), "success", "", "m", 1, 1, 0, 387.465, "").duration == "6 min 27 s"


def test_json_applies_to_resume_alone(tmp_path):
    from agents.loop.errors import BadInputError
    from agents.replay.cli import replay_command

    for other in ({}, {"resume": True, "execute": True}, {"resume": True, "html": tmp_path / "x.html"}):
        with pytest.raises(BadInputError, match="--json only applies with --resume"):
            replay_command(Console(file=io.StringIO()), tmp_path, as_json=True, **other)


def test_show_through_a_pipe_ends_every_line_of_both_streams(workspaces, loop_file):
    """Through the real CLI, stdout piped: the conversation ends with its closing line and a line break, and the
    run a scenario name meant is one whole line on stderr (a pipe that joins the two never glues them)."""
    run_dir = run_scenario(load_scenario(loop_file([py("print(1)")], name="piped")), RunOptions()).run_dir
    proc = run_cli("replay", "piped")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(" s\n") and proc.stdout.splitlines()[-1].startswith("success · 3 messages · ")
    assert proc.stderr == f"run: {run_dir}\n"


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_resume_json_prints_the_summary_line_of_run_json(workspaces, loop_file):
    """`replay --resume --json` starts a run as `run --json` does: stdout is its one JSON summary line."""
    from agents.cli.common import summary

    parent = run_scenario(load_scenario(loop_file([py("print(1)"), py("print(2)")], name="rj")), RunOptions())
    proc = run_cli("replay", str(parent.run_dir), "--resume", "--json", "--message", "Now print 2.")
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    data = json.loads(line)
    assert set(data) == set(summary(parent, 0.0)) and data["status"] == "success" and data["executions"] == 1
    child = load_transcript(Path(data["run_dir"]))
    assert child["parent"]["run_dir"] == str(parent.run_dir) and child["messages"][-1]["role"] == "execution"


# -- html, checked in a real browser -----------------------------------------------------------------
class Browser:
    """Headless chromium driven over the DevTools protocol on a pipe (fd 3/4; no websocket client needed)."""

    def __init__(self, width: int = 1000, height: int = 1400):
        self.to_chrome, self.from_chrome = os.pipe(), os.pipe()
        self.profile = tempfile.mkdtemp(prefix="codeduet-chromium-")
        args = ["chromium", "--headless", "--disable-gpu", "--no-first-run", "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")
        # move chromium's ends above fd 4 (bash: multi-digit fds) so the 3<& / 4>& redirections cannot clobber
        # each other
        r, w = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (self.to_chrome[0], self.from_chrome[1]))
        os.close(self.to_chrome[0])
        os.close(self.from_chrome[1])
        self.proc = subprocess.Popen(["bash", "-c", f'exec "$@" 3<&{r} 4>&{w}', "bash", *args], pass_fds=(r, w),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r)
        os.close(w)
        self.buf, self.next_id, self.events = b"", 0, []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def _read(self) -> dict:
        while b"\0" not in self.buf:
            chunk = os.read(self.from_chrome[0], 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: bool = False, **params: object) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params,
               **({"sessionId": self.session} if session else {})}
        os.write(self.to_chrome[1], json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self.next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply.get("result", {})
            self.events.append(reply)

    def open(self, url: str) -> None:
        self.call("Page.enable", session=True)
        self.call("Page.navigate", session=True, url=url)
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._read())

    def js(self, expression: str) -> object:
        res = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        assert "exceptionDetails" not in res, res
        return res["result"].get("value")

    def screenshot(self, path: Path) -> None:
        size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        data = self.call("Page.captureScreenshot", session=True, format="png", clip=clip, captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(data["data"]))

    def close(self) -> None:
        try:
            self.call("Browser.close")
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
        for fd in (self.to_chrome[1], self.from_chrome[0]):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.mark.docker
@needs_chromium
def test_html_export_renders_in_chromium(repaired_run, tmp_path):
    page = tmp_path / "run.html"
    proc = run_cli("replay", str(repaired_run), "--html", str(page))
    assert proc.returncode == 0, proc.stderr
    text = page.read_text()
    assert "<link" not in text and "<script" not in text and "src=" not in text and "url(" not in text
    browser = Browser()
    try:
        browser.open(page.as_uri())
        assert browser.js("document.title") == "codeduet · demo · success"
        assert browser.js("document.querySelector('header.run h1').innerText") == "demo"
        assert browser.js("document.getElementById('status').innerText") == "SUCCESS"
        assert browser.js("getComputedStyle(document.getElementById('status')).backgroundColor") == "rgb(26, 127, 55)"
        header = browser.js("document.querySelector('header.run').innerText")
        assert "scripted (scripted, scripted)" in header and "2 turns · 2 executions · 1 failed" in header
        roles = browser.js("[...document.querySelectorAll('article.msg')].map(a => a.dataset.role)")
        assert roles == ["task", "assistant", "execution", "assistant", "execution"]
        # code is highlighted: keywords/builtins get their own colour
        assert browser.js("document.querySelectorAll('article.assistant .hl span').length") > 3
        assert browser.js("getComputedStyle(document.querySelector('.hl .nb')).color") != \
            browser.js("getComputedStyle(document.querySelector('.hl pre')).color")
        # the failed execution is marked and its output shown; the good one is collapsed until clicked
        execs = browser.js("[...document.querySelectorAll('.exec')].map(e => [e.className, "
                           "e.querySelector('pre').checkVisibility(), e.querySelector('.exec-head').innerText])")
        assert execs[0][0] == "exec failed" and execs[0][1] is True and "FAILED block01.py · exit 1" in execs[0][2]
        assert execs[1][0] == "exec ok" and execs[1][1] is False
        assert "ZeroDivisionError" in browser.js("document.querySelector('.exec.failed pre').innerText")
        browser.js("document.querySelector('.exec.ok summary').click()")
        assert browser.js("document.querySelector('.exec.ok pre').checkVisibility()") is True
        assert browser.js("document.querySelector('.exec.ok pre').innerText").strip() == "45"
        checks = browser.js("[...document.querySelectorAll('ul.checks')].map(u => u.innerText)")
        assert "✘ stdout_contains: '45'" in checks[0]  # the checks ran after the failed turn too
        assert "✔ stdout_contains: '45'" in checks[1]
        assert browser.js("performance.getEntriesByType('resource').length") == 0  # nothing fetched
        browser.js("document.querySelector('.exec.ok summary').click()")
        shot = tmp_path / "run.png"
        browser.screenshot(shot)
    finally:
        browser.close()
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    shutil.copyfile(shot, SCREENSHOT)


@pytest.mark.docker
def test_a_corrupt_line_in_the_middle_of_events_jsonl_is_skipped_and_named(repaired_run):
    original = load_transcript(repaired_run)
    (repaired_run / "transcript.json").unlink()
    events = repaired_run / "events.jsonl"
    lines = events.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = next(i for i, line in enumerate(lines) if '"type": "sandbox"' in line or '"type":"sandbox"' in line)
    lines[bad] = '{"type": "sandbox", "cut here\n'  # a middle line, not the last: the end event follows it
    events.write_text("".join(lines), encoding="utf-8")
    warnings: list[str] = []
    t = load_transcript(repaired_run, warn=warnings.append)
    assert t["status"] == original["status"] == "success"  # the end event after the bad line was read
    assert len(t["messages"]) == len(original["messages"])
    assert len(warnings) == 1 and f"skipped unreadable line {bad + 1}" in warnings[0], warnings


# -- resume ---------------------------------------------------------------------------------------
@pytest.mark.docker
def test_resume_without_a_message_goes_on_with_the_built_in_follow_up(sandbox_image, workspaces, scenario_file):
    from agents.replay.cli import replay_command
    from agents.replay.resume import DEFAULT_MESSAGE

    path = scenario_file([py("print('first')"), "Done. TERMINATE", py("print('second')"), "TERMINATE"],
                         name="resume_default", termination={"contains": "TERMINATE"})
    parent = record(path)
    out = io.StringIO()
    code = replay_command(Console(file=out, width=120), parent, resume=True)
    assert code == 0, out.getvalue()  # the follow-up says "reply TERMINATE": it must not end the run itself
    child = load_transcript(next(r for r in (workspaces / "resume_default").iterdir() if r != parent))
    assert child["messages"][0]["content"] == DEFAULT_MESSAGE
    assert [m["role"] for m in child["messages"]] == ["task", "assistant", "execution", "assistant"]
    assert "second" in child["messages"][2]["outcome"]["executions"][0]["output"]


@pytest.mark.docker
def test_resume_continues_with_full_history_in_a_linked_run_folder(sandbox_image, workspaces, scenario_file,
                                                                   monkeypatch):
    from agents.models.scripted import ScriptedClient
    from agents.replay.cli import replay_command

    path = scenario_file([py("open('data.txt', 'w').write('hello')"), "Done. TERMINATE",
                          py("print(open('data.txt').read().upper())"), "TERMINATE"], name="resumable",
                         termination={"contains": "TERMINATE"})
    parent = record(path)
    seen: list[list[dict]] = []
    original = ScriptedClient.create

    def spy(self, params):
        seen.append([dict(m) for m in params["messages"]])
        return original(self, params)

    monkeypatch.setattr(ScriptedClient, "create", spy)
    out = io.StringIO()
    code = replay_command(Console(file=out, width=120), parent, resume=True, message="Now print it in upper case.")
    assert code == 0, out.getvalue()
    runs = list((workspaces / "resumable").iterdir())  # same-second folder names sort by their random suffix
    assert len(runs) == 2 and parent in runs
    child_dir = next(r for r in runs if r != parent)
    child = load_transcript(child_dir)
    assert child["parent"]["run_dir"] == str(parent) and child["parent"]["messages"] == 4
    assert [m["role"] for m in child["messages"]] == ["task", "assistant", "execution", "assistant"]
    assert child["messages"][0]["content"] == "Now print it in upper case."
    assert "HELLO" in child["messages"][2]["outcome"]["executions"][0]["output"]  # parent's files carried over
    first_call = [m["content"] for m in seen[0] if m["role"] != "system"]
    assert first_call[0] == "Print the answer." and "Done. TERMINATE" in first_call
    assert first_call[-1] == "Now print it in upper case."
    # the resumed run is itself a saved run: it re-executes and shows its parent
    assert run_cli("replay", str(child_dir), "--execute").returncode == 0
    shown = " ".join(run_cli("replay", str(child_dir)).stdout.split())  # long tmp paths wrap the header line
    assert "continues" in shown and "4 earlier messages" in shown, shown[:1500]


@pytest.mark.docker
def test_execute_matches_a_run_recorded_before_the_sandbox_printed_variables(sandbox_image, workspaces,
                                                                               scenario_file):
    """A failing block now shows its variables; replaying a transcript recorded before that (its sandbox has no
    `error_locals` key, its output no variables) still matches, and a new one matches with them."""
    run = record(scenario_file([py("total = 45\nprint(total / 0)"), py("print(45)")], name="old",
                               checks=[{"stdout_contains": "45"}]))
    shown = "Variables where the error happened (block01.py line 2, module level):\n  total = 45\n"
    path = run / "transcript.json"
    assert shown in path.read_text(encoding="utf-8").replace("\\n", "\n")
    assert run_cli("replay", str(run), "--execute").returncode == 0

    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "error_locals"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node.replace(shown, "") if isinstance(node, str) else node

    old = strip(json.loads(path.read_text(encoding="utf-8")))
    assert "error_locals" not in json.dumps(old) and "Variables where" not in json.dumps(old)
    path.write_text(json.dumps(old), encoding="utf-8")
    proc = run_cli("replay", str(run), "--execute")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 block(s): 2 match, 0 diverged" in proc.stdout


def test_files_a_run_wrote_named_like_a_run_folders_are_not_runs(loop_file, workspaces):
    # code that writes events.jsonl and transcript.json into its workspace does not make that workspace a "run"
    from agents.replay.find import find_runs

    code = py("open('events.jsonl', 'w').write('{}')\nopen('transcript.json', 'w').write('{}')\nprint('done')")
    result = run_scenario(load_scenario(loop_file([code, "TERMINATE"], strategy={"candidates": 2})), RunOptions())
    assert (result.run_dir / "workspace" / "events.jsonl").is_file()
    assert find_runs(workspaces) == [result.run_dir]
    assert find_runs(workspaces, result.run_dir.parent.name) == [result.run_dir]
