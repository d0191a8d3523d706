"""Feedback that never misleads: the checks run after every execution and decide success, and a command-line tool
run bare is reported as printing its usage, not as a failure. Real AG2 conversations with the scripted model, on the
local executor; the command-line tool case also in the Docker sandbox."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from agents.feedback.feedback import Outcome
from agents.feedback.usage_exit import is_usage_exit, reads_arguments
from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.protocols import ExecResult
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT, py
from tests.helpers import run_cli

TOOL = '''# filename: tool.py
import argparse


def count_words(text):
    return len(text.split())


def main():
    parser = argparse.ArgumentParser(description="Count the words of a file.")
    parser.add_argument("path")
    args = parser.parse_args()
    with open(args.path) as fh:
        print(count_words(fh.read()))


if __name__ == "__main__":
    main()
'''
CHECK = '''import subprocess
import sys

import tool


def test_count_words():
    assert tool.count_words("a b  c") == 3


def test_the_command_line():
    out = subprocess.run([sys.executable, "tool.py", "words.txt"], capture_output=True, text=True)
    assert out.stdout.strip() == "4"
'''
RUN_IT = ("import subprocess, sys\n"
          "print(subprocess.run([sys.executable, 'tool.py', 'words.txt'], capture_output=True, text=True).stdout)")
FILES = {"words.txt": "one two three four\n"}


def reply(*blocks: str) -> str:
    """An assistant reply holding these python blocks, in order."""
    return "Here it is.\n" + "\n".join(f"```python\n{b}\n```" for b in blocks)


def messages(result) -> list[dict]:
    return load_transcript(result.run_dir)["messages"]


@pytest.fixture
def tool_scenario(scenario_file, tmp_path, request):
    """A scenario about writing tool.py, with a hidden pytest check on it: tool_scenario(replies, kind, **over)."""
    (tmp_path / "test_tool.py").write_text(CHECK)

    def make(replies: list[str], kind: str = "local", **overrides):
        if kind == "docker":
            request.getfixturevalue("sandbox_image")
        overrides.setdefault("checks", [{"pytest": "test_tool.py"}])
        return scenario_file(replies, task="Write tool.py, a command-line tool that prints the word count of a file.",
                             files=FILES, sandbox={"kind": kind, "timeout": 20}, **overrides)
    return make


# -- the checks run after every execution, and decide --------------------------------------------------------

@pytest.mark.parametrize("kind", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_saved_cli_tool_run_bare_prints_its_usage_and_the_checks_judge_it(tool_scenario, workspaces, kind):
    result = run_scenario(load_scenario(tool_scenario([reply(TOOL), "never asked"], kind)), RunOptions())
    assert result.status == "success", result.reason
    assert result.reason == "every acceptance check passed"
    report = messages(result)[2]
    (execution,) = report["outcome"]["executions"]
    assert execution["exit_code"] == 2 and execution["usage"] is True and "usage: tool.py" in execution["output"]
    assert [c["passed"] for c in report["outcome"]["checks"]] == [True]  # they ran, whatever the exit code
    assert report["outcome"]["success"] is True
    text = report["content"]
    assert text.startswith("Acceptance checks (these decide success): every check passed, so the task is done.")
    assert ("Your run (information only; the checks decide success): saved tool.py; run with no arguments it "
            "printed its usage (exit 2), as a command-line tool does. Run it with arguments to try it.") in text
    assert "failed" not in text.lower() and "Fix the cause" not in text
    from agents.record.display import outcome_text
    from agents.replay.html import render_html

    t = load_transcript(result.run_dir)
    assert t["totals"]["failed_executions"] == 0  # a usage line is not a failure in the totals, the page, the terminal
    assert '<div class="exec ok" data-exit="2">' in render_html(t) and "✘" not in outcome_text(report["outcome"]).plain


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_checks_run_after_a_crash_and_the_report_says_which_part_decides(tool_scenario, workspaces):
    crash = "import tool\nprint(tool.count_words('a b'))"  # tool.py does not exist yet
    result = run_scenario(load_scenario(tool_scenario([reply(crash), reply(TOOL)])), RunOptions())
    assert result.status == "success", result.reason
    report = messages(result)[2]
    assert report["outcome"]["executions"][0]["exit_code"] == 1
    assert [c["passed"] for c in report["outcome"]["checks"]] == [False]  # run although the script crashed
    text = report["content"]
    assert text.startswith("Acceptance checks (these decide success): 1 of 1 failed.\n- FAILED pytest (hidden tests)")
    assert "Your run (information only; the checks decide success): it failed (exit code 1).\nError:\n```" in text
    assert "ModuleNotFoundError: No module named 'tool'" in text and "Fix the cause of the error. First" in text
    assert report["outcome"]["summary"].startswith("it failed with exit code 1: ModuleNotFoundError")
    assert "and 1 of 1 checks failed: pytest (hidden tests): 'test_tool.py'" in report["outcome"]["summary"]


@pytest.mark.parametrize("kind", ["local", pytest.param("docker", marks=pytest.mark.docker)])
@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_in_a_task_about_files_failing_checks_ask_for_the_file_even_after_a_shell_run(tool_scenario, scenario_file,
                                                                                      workspaces, kind):
    """fix_median (2026-11-26): after a reply that only ran the tests in a sh block, the checks still failed on the
    module, and the report asked for "the corrected commands in one ```sh block": the model then fixed commands,
    never the file. In a task about files, failing checks judge the files, so the file is asked for."""
    wrong = TOOL.replace("return len(text.split())", "return len(text.split(' '))")  # 'a b  c' counts 4
    run_tests = "```sh\npython -m pytest -q test_count.py::test_double_space\n```"  # no such test file: exit 4
    result = run_scenario(load_scenario(tool_scenario([reply(wrong), run_tests, "TERMINATE"], kind)), RunOptions())
    report = messages(result)[4]
    assert report["outcome"]["executions"][0]["language"] == "sh"
    assert [c["passed"] for c in report["outcome"]["checks"]] == [False]
    text = report["content"]
    assert "corrected commands" not in text
    assert ("which part of your code gives the wrong result, and what you will change there. Then send the whole "
            "corrected file in a ```python block whose first line is `# filename: <its path>`") in text
    # a task about no file: a failed shell block is still asked again as shell, checks or not
    path = scenario_file(["```sh\nls /no/such/dir\n```", "TERMINATE"], checks=[{"stdout_contains": "42"}],
                         sandbox={"kind": kind, "timeout": 20})
    script_task = messages(run_scenario(load_scenario(path), RunOptions()))[2]["content"]
    assert "Then send the corrected commands in one ```sh block." in script_task


def test_when_every_check_passes_a_crash_of_the_models_own_script_does_not_undo_it(workspaces, loop_file):
    own_test = "open('result.txt', 'w').write('ok')\nassert 1 + 1 == 3, 'my own test is wrong'"
    result = run_scenario(load_scenario(loop_file([py(own_test), "never asked"],
                                                  checks=[{"file_exists": "result.txt"}])), RunOptions())
    assert result.status == "success", result.reason
    outcome = messages(result)[2]["outcome"]
    assert outcome["executions"][0]["exit_code"] == 1 and outcome["success"] is True
    assert outcome["summary"].startswith("every check passed (it failed with exit code 1: AssertionError")


def test_an_output_check_judges_only_a_run_that_exited_0(workspaces, loop_file):
    crash = "values = [3, 1, 2]\nprint(sorted(values)[3])"  # its traceback quotes the line, which holds a 3
    result = run_scenario(load_scenario(loop_file([py(crash), py("print(sorted([3, 1, 2])[-1])")],
                                                  checks=[{"stdout_contains": "3"}])), RunOptions())
    assert result.status == "success", result.reason
    first = messages(result)[2]
    assert "values = [3, 1, 2]" in first["outcome"]["executions"][0]["output"]
    assert first["outcome"]["checks"][0]["passed"] is False and first["outcome"]["success"] is False
    assert "not judged: the last block failed (exit code 1)" in first["content"]


def test_output_checks_a_crash_left_unjudged_are_said_once_before_the_traceback(workspaces, loop_file):
    """Thirteen identical 'not judged' lines came before the traceback in dir_sizes: now one line counts them, the
    judged checks keep their own lines, and the summary a repeat or a fresh attempt quotes counts them too."""
    crash = "print('a 1')\nprint(undefined_total)"
    checks = [{"stdout_contains": "a 1"}, {"stdout_regex": "b 2"}, {"stdout_regex": "total 3"},
              {"file_exists": "out.txt"}]
    result = run_scenario(load_scenario(loop_file([py(crash), py("print('a 1')")], checks=checks)), RunOptions())
    report = messages(result)[2]
    content = report["content"]
    assert "- FAILED 3 output checks, not judged: the last block failed (exit code 1)" in content, content
    assert "stdout_regex" not in content and "- FAILED file_exists: 'out.txt'" in content, content
    assert content.index("3 output checks") < content.index("NameError")
    assert [c["passed"] for c in report["outcome"]["checks"]] == [False] * 4  # the record keeps each check
    summary = report["outcome"]["summary"]
    assert "4 of 4 checks failed: file_exists: 'out.txt'; 3 output checks (the script did not write" in summary, \
        summary


def test_a_refused_file_runs_nothing_so_the_checks_do_not_run(workspaces, loop_file):
    path = loop_file([py("# filename: /etc/evil.py\nprint(1)"), py("print(42)")],
                     checks=[{"stdout_contains": "42"}])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    refused = messages(result)[2]
    assert refused["outcome"]["checks"] == [] and refused["content"].startswith("The code failed (exit code 1).")
    assert "Not saved" in refused["content"]


def test_a_reply_that_only_saves_a_file_still_gets_the_checks(workspaces, loop_file):
    path = loop_file(["```text\n# filename: result.txt\nok\n```", "never asked"],
                     checks=[{"file_exists": "result.txt"}])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    outcome = messages(result)[2]["outcome"]
    assert outcome["executions"][0]["saved_only"] and [c["passed"] for c in outcome["checks"]] == [True]


# -- a command-line tool run bare -----------------------------------------------------------------------------

def test_without_checks_a_tool_run_bare_is_not_a_failure_and_the_block_running_it_still_runs(tool_scenario,
                                                                                            workspaces):
    path = tool_scenario([reply(TOOL), reply(RUN_IT), "never asked"], checks=[])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success" and result.reason == "the last execution exited 0", result.reason
    first, second = messages(result)[2], messages(result)[4]
    assert first["outcome"]["success"] is False  # no checks: the last block must exit 0, and it has not run yet
    assert first["content"].startswith("Saved tool.py. Run with no arguments it printed its usage (exit 2), as a "
                                       "command-line tool does: that is not an error.")
    assert "To try it, run it with arguments" in first["content"] and "failed" not in first["content"].lower()
    assert first["outcome"]["summary"] == ("tool.py, run with no arguments, printed its usage (exit 2), as a "
                                           "command-line tool does")
    assert second["outcome"]["executions"][0]["output"].strip() == "4"


def test_a_tool_saved_and_run_with_arguments_in_one_reply_runs_both_blocks(tool_scenario, workspaces):
    result = run_scenario(load_scenario(tool_scenario([reply(TOOL, RUN_IT)], checks=[])), RunOptions())
    assert result.status == "success", result.reason
    report = messages(result)[2]
    assert [(e["exit_code"], e["usage"]) for e in report["outcome"]["executions"]] == [(2, True), (0, False)]
    assert report["content"].startswith("The code ran successfully (exit code 0).")
    assert ("[codeduet: tool.py, run with no arguments, printed its usage (exit 2), as a command-line tool does]\n"
            "usage: tool.py") in report["content"]


def test_a_hand_written_tool_exiting_1_with_a_usage_line_is_a_usage_exit_and_nothing_else_is():
    hand = "import sys\nif len(sys.argv) < 2:\n    sys.exit('Usage: tool.py FILE')\n"
    usage = ExecResult(exit_code=1, output="Usage: tool.py FILE\n", duration_s=0.1, filename="tool.py")
    assert is_usage_exit(usage, hand)
    assert is_usage_exit(ExecResult(2, "Usage: t.py [OPTIONS] PATH\nError: Missing argument 'PATH'.", 0.1),
                         "import click\n")
    assert not is_usage_exit(usage, "print('usage: none')\n")  # does not read its arguments: not a tool
    crash = "Traceback (most recent call last):\n  File \"tool.py\", line 3\nusage: ValueError: bad\n"
    assert not is_usage_exit(ExecResult(1, crash, 0.1), hand)  # a crash, whatever it prints
    assert not is_usage_exit(ExecResult(3, "usage: tool.py FILE", 0.1), hand)
    assert not is_usage_exit(ExecResult(124, "usage: tool.py FILE", 0.1, timed_out=True), hand)
    assert reads_arguments("from sys import argv\n") and reads_arguments("import typer\n")
    assert not reads_arguments("import sys\nprint(sys.version)\n") and not reads_arguments("def (:\n")


def test_a_usage_exit_counts_as_running_clean_not_as_a_crash():
    usage = ExecResult(2, "usage: tool.py [-h] path", 0.1, filename="tool.py", usage=True)
    crash = ExecResult(1, "Traceback (most recent call last):\nNameError: name 'x' is not defined", 0.1)
    assert Outcome("executed", [usage]).ran_clean and not Outcome("executed", [crash]).ran_clean
    assert not Outcome("executed", [usage]).success  # no checks: the last block must exit 0
    assert "failed" not in Outcome("executed", [usage]).summary()


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_replay_execute_reruns_the_checks_of_a_turn_whose_block_exited_2(tool_scenario, workspaces):
    result = run_scenario(load_scenario(tool_scenario([reply(TOOL)])), RunOptions())
    assert result.status == "success", result.reason
    out = run_cli("replay", str(result.run_dir), "--execute")
    assert out.returncode == 0 and "1 block(s): 1 match, 0 diverged" in out.stdout, out.stdout + out.stderr


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_failed_pytest_check_names_every_failing_test_and_counts_the_passing_ones(tmp_path):
    from agents.scenario.checks import pytest_counts, pytest_summary

    def pytest_output(source: str) -> str:  # real pytest, the same flags as the check
        (tmp_path / "test_h.py").write_text(source)
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header", "-rN",
                               "test_h.py"], cwd=tmp_path, capture_output=True, text=True).stdout

    out = pytest_output("def test_a():\n    assert 1 == 1\n\ndef test_b():\n    assert [1] == [2], 'b is wrong'\n\n"
                        "def test_c():\n    raise ValueError('c broke')\n\ndef test_d():\n    pass\n")
    assert pytest_counts(out) == (2, 4)
    text = pytest_summary(out, 2, 4)
    assert text.startswith("2 of 4 tests failed: test_b, test_c\ntest_b:\n>")
    assert "AssertionError: b is wrong" in text and "test_c:\n" in text and "ValueError: c broke" in text
    one = pytest_output("def test_only():\n    assert 2 + 2 == 5\n")  # one test (HumanEval's examples): why, alone
    assert pytest_counts(one) == (0, 1) and pytest_summary(one, 0, 1).startswith(">       assert 2 + 2 == 5")
    broken = pytest_output("import no_such_module\n\ndef test_x():\n    pass\n")
    assert pytest_counts(broken) == (0, 1)
    assert "No module named 'no_such_module'" in pytest_summary(broken, 0, 1)
    assert pytest_counts("Killed") == (0, 0)
    frames = pytest_output("def helper():\n    raise KeyError('deep')\n\ndef test_a():\n    helper()\n\n"
                           "def test_b():\n    assert 1 == 2\n")  # pytest puts `_ _ _` between test_a's two frames
    assert "_ _ _" in frames
    text = pytest_summary(frames, *pytest_counts(frames))
    assert text.startswith("2 of 2 tests failed: test_a, test_b\ntest_a:\n") and "KeyError: 'deep'" in text
    long_name = "test_" + "a_very_long_name_" * 6  # pytest's header then has one `_` a side
    out = pytest_output(f"def {long_name}():\n    assert 1 == 2\n\ndef test_short():\n    assert 3 == 4\n")
    assert pytest_summary(out, 0, 2).startswith(f"2 of 2 tests failed: {long_name}, test_short\n")


def test_a_failed_check_asks_for_the_projects_file_in_its_language_not_the_scripts(tmp_path):
    """js_slugify (2026-11-27): the 1.5B ran a Python script in a JavaScript project, and the report asked for 'the
    whole corrected file in a ```python block'; the hidden tests judge slugify.js, so it asks for JavaScript."""
    from agents.feedback.feedback import execution_feedback
    from agents.scenario.checks import CheckResult

    (tmp_path / "slugify.js").write_text("module.exports = (t) => t;\n", encoding="utf-8")
    (tmp_path / "package.json").write_text("{}\n", encoding="utf-8")
    outcome = Outcome("executed", results=[ExecResult(1, "AssertionError\n", 0.1, filename="block03.py")],
                      checks=[CheckResult("command (hidden tests): 'node --test'", False, "it exited with 1")])
    report = execution_feedback(outcome, tmp_path, files_task=True, languages=("javascript",))
    assert "```javascript block whose first line is `// filename:" in report and "```python block" not in report
    (tmp_path / "helper.py").write_text("x = 1\n", encoding="utf-8")  # a project with Python in it: as before
    assert "```python block" in execution_feedback(outcome, tmp_path, files_task=True, languages=("javascript",))


def test_a_run_that_failed_as_a_check_reports_is_not_shown_twice():
    """c_memory_bug (2026-11-27): the check built stats.c with the sanitizers and so did the model's own run; the
    same 11-line ASan report was shown twice per turn. The run is now said in one line, its codeduet notes kept."""
    from agents.feedback.compiler_output import summarize
    from agents.feedback.feedback import execution_feedback
    from agents.scenario.checks import CheckResult

    raw = (ROOT / "tests" / "data" / "compiler_output" / "asan_heap_overflow.txt").read_text(encoding="utf-8")
    other = re.sub(r"==(\d+)==", r"==9\1==", raw.replace("0x", "0x1"))  # another process: addresses, pid
    note = "[codeduet: this ```c block has no `// filename:` line, but most of stats.c is in it, so it was saved]\n"
    check = CheckResult("command: 'cc -fsanitize=address stats.c && ./a.out'", False,
                        "it exited with 1:\n" + summarize(other))
    outcome = Outcome("executed", results=[ExecResult(1, note + raw, 0.1, filename="stats.c", language="c")],
                      checks=[check])
    report = execution_feedback(outcome)
    assert report.count("heap-buffer-overflow on address") == 1, report
    assert "it failed the same way as the check above (exit code 1)" in report and note.strip() in report
    different = CheckResult("command: 'make test'", False, "it exited with 2:\nmake: *** No rule to make target")
    report = execution_feedback(Outcome("executed", results=outcome.results, checks=[different]))
    assert report.count("heap-buffer-overflow on address") == 1 and "the same way" not in report


def test_a_saved_page_that_fails_its_checks_is_asked_for_again_as_a_page(scenario_file, workspaces):
    """temperature_converter (2026-12-07, the paper's frontend suite): the report on a saved index.html asked for
    "the whole corrected file in a ```python block whose first line is `# filename: <its path>`"; the 1.5B then
    sent the page's script as Python, which ran and failed with a SyntaxError four turns running."""
    page = "```html\n<!-- filename: index.html -->\n<p id=\"greeting\">Hello</p>\n```"
    path = scenario_file([page, "TERMINATE"], task="Write index.html: a page that says Goodbye.",
                         checks=[{"command": "grep -q Goodbye index.html"}], sandbox={"kind": "local", "timeout": 20})
    report = messages(run_scenario(load_scenario(path), RunOptions()))[2]
    assert report["outcome"]["executions"][0]["saved_only"] is True
    assert ("Then send the whole corrected file in a ```html block whose first line is "
            "`<!-- filename: <its path> -->`") in report["content"]
    assert "```python" not in report["content"]
