"""`sandbox.session: kernel` against the real Docker sandbox: one live interpreter per sandbox, a block's last value,
a timeout that interrupts and keeps the kernel, a kernel that dies and is restarted (and said so), hostile code that
stays contained, figures in both sessions, a candidate's kernel started from the attempt's state, and a scripted
five-step analysis that replays as `match` and exports its chart."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from agents.feedback.figures import png_info
from agents.loop.conversation import RunOptions, run_scenario
from agents.record.run_folder import workspace_name
from agents.record.transcript import load_transcript
from agents.replay.execute import replay_blocks
from agents.replay.html import render_html
from agents.sandbox import make_executor
from agents.sandbox.config import SandboxConfig
from agents.scenario.spec import load_scenario
from tests.conftest import IMAGE, ROOT, py
from tests.helpers import run_cli

pytestmark = pytest.mark.docker

LEFTOVERS = "import os\nprint('others', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"


@pytest.fixture
def kernel(tmp_path: Path, sandbox_image: str):
    executor = make_executor(SandboxConfig(image=sandbox_image, session="kernel", timeout=4), tmp_path / "ws")
    executor.start()
    yield executor
    executor.stop()


def test_variables_imports_and_data_persist_and_the_last_value_shows(kernel):
    first = kernel.execute("import pandas as pd\ndf = pd.DataFrame({'region': ['n', 's', 'n'], 'x': [1, 2, 3]})\n"
                           "df")
    assert first.exit_code == 0 and "region" in first.output and first.table is None  # read by run_reply
    second = kernel.execute("total = df.groupby('region').x.sum()\nprint('rows', len(df))\ntotal")
    assert second.exit_code == 0
    assert "rows 3" in second.output and "n    4" in second.output
    third = kernel.execute("x = 1\nx = x + 1")  # an assignment shows nothing
    assert third.exit_code == 0 and third.output.strip() == ""
    assert kernel.session_files() == ["block01.py", "block02.py", "block03.py"]


def test_an_error_keeps_the_kernel_and_shows_the_failing_line_variables(kernel):
    kernel.execute("data = {'a': 1}")
    failed = kernel.execute("value = data['b']")
    assert failed.exit_code == 1 and "KeyError: 'b'" in failed.output and "data = {'a': 1}" in failed.output
    assert kernel.execute("print(data['a'])").output.strip() == "1"


def test_a_timeout_interrupts_the_block_and_the_kernel_lives_on(kernel):
    kernel.execute("kept = 41")
    slow = kernel.execute("import time, subprocess\nsubprocess.Popen(['sleep', '300'])\nwhile True: time.sleep(0.1)")
    assert slow.timed_out and slow.exit_code == 124
    assert "KeyboardInterrupt" in slow.output and "the Python kernel lives on" in slow.output
    after = kernel.execute(f"print(kept + 1)\n{LEFTOVERS}")
    assert after.exit_code == 0 and "42" in after.output
    assert "sleep" not in kernel.execute("import os\nprint(os.popen('ps -eo comm').read())").output


def test_a_block_that_ignores_the_interrupt_ends_the_kernel_and_the_next_starts_fresh(kernel):
    kernel.execute("kept = 1")
    stuck = kernel.execute("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass")
    assert stuck.timed_out and "the Python kernel was killed" in stuck.output
    fresh = kernel.execute("print(kept)")
    assert "a fresh Python kernel" in fresh.output and "NameError" in fresh.output


@pytest.mark.parametrize("death, why", [("import os\nos._exit(3)", "exited with status 3"),
                                        ("import ctypes\nctypes.string_at(0)", "SIGSEGV")])
def test_a_kernel_that_dies_is_reported_and_restarted(kernel, death, why):
    kernel.execute("kept = 1")
    died = kernel.execute(death)
    assert died.exit_code != 0 and "the Python kernel died during this block" in died.output and why in died.output
    assert kernel.session_files() == []
    fresh = kernel.execute("print('fresh')")
    assert fresh.exit_code == 0 and "a fresh Python kernel" in fresh.output and why in fresh.output
    assert kernel.session_files() == [fresh.filename]


def test_hostile_blocks_in_the_kernel_stay_contained(tmp_path: Path, sandbox_image: str):
    cfg = SandboxConfig(image=sandbox_image, session="kernel", timeout=6, memory="256m", pids=64,
                        output_limit=2000)
    executor = make_executor(cfg, tmp_path / "ws")
    executor.start()
    try:
        bomb = executor.execute("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
                                "        pass")
        assert bomb.exit_code != 0
        memory = executor.execute("hog = []\nwhile True: hog.append(bytearray(16 << 20))")
        assert memory.exit_code != 0 and ("MemoryError" in memory.output or "died" in memory.output)
        flood = executor.execute("while True: print('x' * 1000)")
        assert flood.truncated and len(flood.output) < 4000
        after = executor.execute("print('alive')")
        assert after.exit_code == 0 and "alive" in after.output
    finally:
        executor.stop()


@pytest.mark.parametrize("session", ["process", "kernel"])
def test_figures_shown_or_left_open_are_saved_and_a_saved_one_is_not_doubled(tmp_path: Path, sandbox_image: str,
                                                                               session: str):
    executor = make_executor(SandboxConfig(image=sandbox_image, session=session), tmp_path / "ws")
    executor.start()
    try:
        executor.execute("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('left open')")
        executor.execute("import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [1, 2])\nplt.title('shown')\n"
                         "plt.savefig('mine.png')\nplt.show()")
    finally:
        executor.stop()
    pngs = sorted(str(p.relative_to(executor.workspace)) for p in executor.workspace.rglob("*.png"))
    assert pngs == ["figures/block01-1.png", "mine.png"]
    assert png_info(executor.workspace / "figures/block01-1.png")["title"] == "left open"
    assert png_info(executor.workspace / "mine.png") == {"width": 640, "height": 480, "title": "shown",
                                                         "axes": "title: shown"}


def test_a_candidate_kernel_starts_from_the_attempts_state(tmp_path: Path, sandbox_image: str):
    cfg = SandboxConfig(image=sandbox_image, session="kernel")
    attempt = make_executor(cfg, tmp_path / "attempt")
    attempt.start()
    try:
        attempt.execute("rows = [1, 2, 3]")
        attempt.execute("rows.append(4)\nprint('side effect')")
    finally:
        attempt.stop()
    shutil.copytree(attempt.workspace, tmp_path / "candidate")
    candidate = make_executor(cfg, tmp_path / "candidate")
    candidate.start()
    try:
        candidate.restore(attempt.session_files())
        result = candidate.execute("print(sum(rows))")
    finally:
        candidate.stop()
    assert result.exit_code == 0 and result.output.strip() == "10"


def test_a_scripted_analysis_keeps_its_dataframe_replays_as_match_and_exports_its_chart(sandbox_image, workspaces):
    scenario = load_scenario(ROOT / "scenarios" / "data_steps_scripted.yaml")
    scenario = scenario.model_copy(update={"sandbox": scenario.sandbox.model_copy(update={"image": IMAGE})})
    result = run_scenario(scenario, RunOptions())
    assert result.status == "success"
    t = load_transcript(result.run_dir)
    runs = [e for m in t["messages"] if m["role"] == "execution" for e in m["outcome"]["executions"]]
    assert [e["exit_code"] for e in runs] == [0, 0, 0, 0, 0]
    assert runs[1]["table"]["shape"] == [3, 8] and runs[2]["table"]["index"] == ["North", "South", "East", "West"]
    assert runs[4]["figures"][0]["path"] == "figures/block05-1.png"
    assert runs[4]["figures"][0]["title"] == "Revenue by region"
    feedback = [m for m in t["messages"] if m["role"] == "execution"][-1]["content"]
    assert "Figures saved" in feedback and "figures/block05-1.png (640x480 px" in feedback
    reports = replay_blocks(t, SandboxConfig.model_validate({**t["scenario"]["sandbox"], "image": IMAGE}))
    assert [r.problems for r in reports] == [[]] * 5
    page = render_html(t)
    assert page.count('<img src="data:image/png;base64,') == 1 and 'class="value-table"' in page
    assert (result.run_dir / workspace_name(1) / "figures" / "block05-1.png").is_file()


def test_a_resumed_kernel_session_runs_its_parents_blocks_first(tmp_path: Path, sandbox_image, workspaces):
    path = tmp_path / "resume_me.yaml"
    path.write_text(yaml.safe_dump({
        "name": "resume_me", "task": "Set kept.", "checks": [{"stdout_contains": "set"}],
        "sandbox": {"image": IMAGE, "session": "kernel"}, "strategy": {"attempts": 1},
        "model": {"provider": "scripted", "replies": [py("kept = 41\nprint('set')"), py("print(kept + 1)"),
                                                      "TERMINATE"]}}))
    first = run_scenario(load_scenario(path), RunOptions())
    assert first.status == "success"
    resumed = run_cli("replay", str(first.run_dir), "--resume", "--json")
    run_dir = Path(json.loads(resumed.stdout.strip().splitlines()[-1])["run_dir"])
    t = load_transcript(run_dir)
    outputs = [e["output"] for m in t["messages"] if m["role"] == "execution" and m.get("index", 0) >= 0
               for e in m["outcome"]["executions"]]
    assert any(o.strip() == "42" for o in outputs), outputs
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert [e["files"] for e in events if e["type"] == "kernel_restored"] == [["block01.py"]]


def test_a_blocks_chdir_lasts_that_block(kernel):
    kernel.execute("import os\nos.makedirs('data', exist_ok=True)\nos.chdir('data')\nprint(os.getcwd())")
    after = kernel.execute("import os\nprint(os.getcwd())\nframe = 1")
    assert after.exit_code == 0 and after.output.strip() == "/workspace"
