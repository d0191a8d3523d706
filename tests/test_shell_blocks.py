"""Shell blocks run, as in AG2's executors: ```sh, ```bash, ```shell and the commands of a ```console block run in
the same hardened sandbox, in reply order with the Python blocks and saved files, under the same limits, reports,
repeat rules and checks; a block of a language that does not run is named in the report. Real AG2 conversations
with the scripted model and real Docker containers (the executor cases also on the local executor)."""

from __future__ import annotations

import uuid

import pytest
from rich.syntax import Syntax
from rich.text import Text

from agents.loop.codeblocks import CodeBlock, console_commands, extract_code_blocks
from agents.loop.conversation import RunOptions, run_scenario
from agents.record.display import message_body, outcome_text
from agents.record.transcript import load_transcript
from agents.replay.execute import recorded_blocks
from agents.replay.html import content_html, render_html
from agents.sandbox import make_executor
from agents.sandbox.config import SandboxConfig
from agents.sandbox.image import PYTHON_PACKAGES
from agents.scenario.spec import load_scenario
from tests.conftest import IMAGE
from tests.helpers import run_cli

HELLO = "# filename: hello.py\nimport sys\nprint('hello', *sys.argv[1:])"
SAVE_THEN_RUN = f"Save it:\n```python\n{HELLO}\n```\nThen run it:\n```sh\npython hello.py world\n```\n"


def fence(language: str, code: str) -> str:
    return f"```{language}\n{code}\n```"


def run(scenario_file, replies: list[str], **overrides):
    """Run a scripted scenario in the Docker sandbox; (result, transcript messages)."""
    result = run_scenario(load_scenario(scenario_file(replies, **overrides)), RunOptions())
    return result, load_transcript(result.run_dir)["messages"]


# -- which blocks run ------------------------------------------------------------------------------------------
def test_shell_tags_run_with_their_shell_and_a_console_block_runs_its_prompt_lines():
    kinds = {lang: CodeBlock(lang, "echo hi").runnable_as for lang in ("sh", "bash", "shell", "Shell", "javascript")}
    assert kinds == {"sh": "sh", "bash": "bash", "shell": "sh", "Shell": "sh", "javascript": "javascript"}
    assert not CodeBlock("javascript", "x").runs_in([])  # a language runs only in a sandbox that has it
    session = "$ python report.py data.csv\ntotal 3\n$ ls \\\n>   -l\nreport.py\n"
    assert console_commands(session) == "python report.py data.csv\nls \\\n  -l\n"
    output_only = CodeBlock("console", "total 3\nreport.py\n")
    assert output_only.runnable_as is None and output_only.shown_only and not output_only.actionable
    assert [b.actionable for b in extract_code_blocks(SAVE_THEN_RUN)] == [True, True]


def test_a_tilde_fence_is_shown_as_it_is_treated():
    """One fence grammar (agents/loop/codeblocks.py segments): a `~~~` fence neither runs nor is reported "not
    run", so
    the terminal and the HTML page show it as prose; the ``` block beside it is shown as code and is what runs."""
    content = "First:\n~~~python\nprint('tilde')\n~~~\nThen:\n```python\nprint('backtick')\n```\n"
    assert [b.code for b in extract_code_blocks(content)] == ["print('backtick')\n"]
    body = message_body(content)
    assert [p.code for p in body if isinstance(p, Syntax)] == ["print('backtick')"]
    assert any(isinstance(p, Text) and "~~~python\nprint('tilde')\n~~~" in p.plain for p in body)
    page = content_html(content)
    assert page.count('<div class="code"') == 1 and "tilde" not in page.split('<div class="code"')[1]
    assert "~~~python\nprint(&#x27;tilde&#x27;)\n~~~" in page


# -- in a conversation ------------------------------------------------------------------------------------------
@pytest.mark.docker
def test_a_sh_block_after_a_saved_module_runs_it_in_reply_order(sandbox_image, workspaces, scenario_file):
    result, messages = run(scenario_file, [SAVE_THEN_RUN], checks=[{"stdout_contains": "hello world"}])
    assert result.status == "success", result.reason
    runs = messages[2]["outcome"]["executions"]
    assert [(e["filename"], e["language"], e["exit_code"]) for e in runs] == [
        ("hello.py", "python", 0), ("block01.sh", "sh", 0)]
    assert runs[1]["command"] == "python hello.py world" and runs[1]["output"].strip() == "hello world"
    assert "$ python hello.py world (block01.sh) exit=0" in outcome_text(messages[2]["outcome"]).plain


@pytest.mark.docker
def test_bash_runs_with_bash_and_a_console_block_runs_only_its_commands(sandbox_image, workspaces, scenario_file):
    reply = (fence("bash", 'if [[ -n "$BASH_VERSION" ]]; then echo "bash here"; fi') + "\n"
             + fence("console", "$ echo from the console\nthis line is output, not a command") + "\n"
             + fence("console", "total 3"))
    result, messages = run(scenario_file, [reply])
    outcome = messages[2]["outcome"]
    assert result.status == "success" and [e["language"] for e in outcome["executions"]] == ["bash", "sh"]
    assert outcome["executions"][0]["output"].strip() == "bash here"
    assert outcome["executions"][1]["output"].strip() == "from the console"
    assert "not_run" not in outcome and "Not run" not in messages[2]["content"]  # output shown, not dropped code


@pytest.mark.docker
def test_a_block_of_a_language_that_does_not_run_is_named_in_the_report(sandbox_image, workspaces, scenario_file):
    reply = fence("python", "print(6 * 7)") + "\nOr in the browser:\n" + fence("javascript", "console.log(6 * 7)")
    result, messages = run(scenario_file, [reply, fence("ruby", "puts 42")], termination={"contains": "TERMINATE"},
                           user_proxy={"max_consecutive_auto_reply": 2})
    report = messages[2]["content"]
    assert report.startswith("Not run: your ```javascript block. Only ```python and shell (```sh, ```bash) blocks")
    assert messages[2]["outcome"]["not_run"] == ["javascript"] and "42" in report
    nothing = messages[4]
    assert nothing["outcome"]["kind"] == "unsupported" and "your reply had a ```ruby block" in nothing["content"]


@pytest.mark.docker
def test_pip_install_says_there_is_no_network_and_what_the_image_has(sandbox_image, workspaces, scenario_file):
    result, messages = run(scenario_file, [fence("sh", "pip install requests numpy\npython -c 'import numpy'")])
    run_ = messages[2]["outcome"]["executions"][0]
    note = [line for line in run_["output"].splitlines() if line.startswith("[codeduet:")]
    assert note == [f"[codeduet: `pip install requests numpy` cannot download anything: the sandbox has no network. "
                    f"Its Python has the standard library and {', '.join(PYTHON_PACKAGES)}; numpy is already there; "
                    f"use those. To put requests in the sandbox, the scenario declares `sandbox.packages.python: "
                    f"[requests]` and its image is built again with `codeduet sandbox build SCENARIO.yaml`]"]
    assert run_["exit_code"] == 0 and result.status == "success"  # the script went on, and numpy imports


@pytest.mark.docker
def test_a_failing_shell_block_stops_the_rest_and_the_checks_still_judge(sandbox_image, workspaces, scenario_file):
    reply = fence("sh", "echo partial > out.txt\nexit 3") + "\n" + fence("python", "print('never')")
    result, messages = run(scenario_file, [reply], checks=[{"file_exists": "out.txt"}],
                           termination={"contains": "TERMINATE"}, user_proxy={"max_consecutive_auto_reply": 1})
    outcome = messages[2]["outcome"]
    assert [e["exit_code"] for e in outcome["executions"]] == [3] and outcome["checks"][0]["passed"]
    assert "never" not in messages[2]["content"] and result.status == "success"


@pytest.mark.docker
def test_a_shell_block_that_already_ran_is_not_run_again(sandbox_image, workspaces, scenario_file):
    again = fence("sh", "echo  one   run")  # the same command, spaced differently
    result, messages = run(scenario_file, [fence("sh", "echo one run; exit 1"), fence("sh", "echo one run; exit 1"),
                                           again], strategy={"max_resamples": 0},
                           user_proxy={"max_consecutive_auto_reply": 3})
    kinds = [m["outcome"]["kind"] for m in messages if m["role"] in ("execution", "user_proxy")]
    assert kinds[:2] == ["executed", "repeat"] and result.totals["executions"] == 1


@pytest.mark.docker
def test_a_named_shell_script_is_saved_and_run_with_its_shell(sandbox_image, workspaces, scenario_file):
    result, messages = run(scenario_file, [fence("bash", "# filename: tools/run.sh\necho saved and run")])
    run_ = messages[2]["outcome"]["executions"][0]
    assert (run_["filename"], run_["language"], run_["output"].strip()) == ("tools/run.sh", "bash", "saved and run")
    assert (result.run_dir / "workspace" / "tools" / "run.sh").read_text().startswith("# filename: tools/run.sh\n")


# -- the sandbox's limits and hardening, for a shell block --------------------------------------------------------
@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def executor(request, tmp_path):
    if request.param == "docker":
        request.getfixturevalue("sandbox_image")
    cfg = SandboxConfig(kind=request.param, image=IMAGE, timeout=2, output_limit=1000)
    ex = make_executor(cfg, tmp_path / "ws", f"shell-test-{uuid.uuid4().hex[:6]}")
    ex.start()
    yield ex
    ex.stop()


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_shell_block_has_the_time_limit_and_the_output_bound(executor):
    slow = executor.execute("echo started\n(sleep 30; echo survived) &\nsleep 30\necho finished", "sh")
    assert slow.timed_out and slow.exit_code == 124 and "started" in slow.output
    assert "finished" not in slow.output and "survived" not in slow.output
    loud = executor.execute("i=0; while [ $i -lt 5000 ]; do echo line $i; i=$((i+1)); done", "sh")
    assert loud.exit_code == 0 and loud.truncated and "output truncated" in loud.output and len(loud.output) < 1500


@pytest.mark.docker
def test_a_shell_block_runs_as_hardened_as_python(sandbox_image, tmp_path):
    ex = make_executor(SandboxConfig(image=IMAGE, timeout=10), tmp_path / "ws", f"shell-hard-{uuid.uuid4().hex[:6]}")
    try:
        ex.start()
        r = ex.execute("id -u\ntouch /usr/x 2>/dev/null || echo read-only\nls /sys/class/net\n"
                       "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status", "bash")
    finally:
        ex.stop()
    lines = r.output.split()
    assert lines[0] != "0" and "read-only" in lines and "lo" in lines and "eth0" not in lines
    assert lines[lines.index("CapEff:") + 1] == "0000000000000000" and lines[lines.index("NoNewPrivs:") + 1] == "1"


# -- replay, HTML, old transcripts --------------------------------------------------------------------------------
@pytest.mark.docker
def test_replay_execute_reruns_the_shell_block_and_the_html_shows_it_as_a_run(sandbox_image, workspaces,
                                                                               scenario_file, tmp_path):
    result, _ = run(scenario_file, [SAVE_THEN_RUN], checks=[{"stdout_contains": "hello world"}])
    proc = run_cli("replay", str(result.run_dir), "--execute")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "✔ match     hello.py" in proc.stdout and "✔ match     block01.sh" in proc.stdout
    assert "2 block(s): 2 match, 0 diverged" in proc.stdout
    page = render_html(load_transcript(result.run_dir))
    assert 'data-language="sh"' in page and "$ python hello.py world (block01.sh)" in page


def test_a_run_recorded_before_shell_blocks_ran_still_pairs_its_executions():
    old = {"messages": [
        {"role": "assistant", "index": 1, "content": fence("sh", "ls") + "\n" + fence("python", "print(1)")},
        {"role": "execution", "index": 2, "outcome": {"executions": [
            {"language": "python", "filename": "block01.py", "exit_code": 0, "output": "1\n"}]}}]}
    [block] = recorded_blocks(old)
    assert (block.code, block.language) == ("print(1)\n", "python")


@pytest.mark.docker
def test_a_failed_shell_block_is_asked_again_as_shell_not_as_python(sandbox_image, workspaces, scenario_file):
    result, messages = run(scenario_file, [fence("sh", "ls /no/such/dir"), "TERMINATE"])
    report = messages[2]["content"]
    assert "exit code 2" in report and "the corrected commands in one ```sh block" in report
    assert "```python" not in report
