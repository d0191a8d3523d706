"""Agents that work on files: AG2's `# filename:` convention in both executors, the workspace shown to the model,
file repeats, and replay. Real AG2 conversations with the scripted model; the executor suite runs on Docker and on
the local executor."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from agents.bench.humaneval.scenario import PROMPTS
from agents.feedback.prompts import render_from
from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.repeats import RepeatMemory
from agents.record.transcript import load_transcript
from agents.sandbox import make_executor
from agents.sandbox.config import SandboxConfig
from agents.sandbox.filenames import UnsafeFilename, clean_path, declared_filename
from agents.scenario.spec import load_scenario
from tests.conftest import IMAGE
from tests.helpers import run_cli

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "# filename: calc.py\ndef add(a, b):\n    return a + b\n"
WRONG = "# filename: calc.py\ndef add(a, b):\n    return a * b\n"
RUN_TESTS = "import calc\nprint('add(2, 3) =', calc.add(2, 3))"
CHECK = "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n    assert calc.add(-1, 1) == 0\n"
LOCAL = {"kind": "local", "timeout": 10}


def reply(*blocks: str) -> str:
    """An assistant reply holding these python blocks, in order."""
    return "Here it is.\n" + "\n".join(f"```python\n{b}\n```" for b in blocks)


def events(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


@pytest.fixture
def calc_scenario(scenario_file, tmp_path):
    """scenario_file with calc.py (buggy) in the workspace and a hidden pytest check on it."""
    (tmp_path / "test_calc_hidden.py").write_text(CHECK)

    def make(replies: list[str], **overrides):
        overrides.setdefault("sandbox", LOCAL)
        return scenario_file(replies, task="Fix add() in calc.py.", files={"calc.py": BUGGY},
                             checks=[{"pytest": "test_calc_hidden.py"}], **overrides)
    return make


# -- the rule -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("first_line, name", [
    ("# filename: calc.py", "calc.py"), ("#filename:pkg/mod.py", "pkg/mod.py"), ("# Filename: `a.txt`", "a.txt"),
    ("// filename: app.js", "app.js"), ("/* filename: s.css */", "s.css"), ("<!-- filename: i.html -->", "i.html"),
    ("# filename:", ""), ("# compute the sum", None), ("# test.py", None), ("print(1)", None)])
def test_only_the_explicit_filename_form_names_a_file(first_line, name):
    assert declared_filename(f"{first_line}\nprint(1)") == name


@pytest.mark.parametrize("raw", ["/etc/passwd", "../x.py", "a/../../x.py", "a/../x.py", ".codeduet_checks/t.py",
                                 "C:\\x.py", "~/x.py", "", "./", "a\x00b"])
def test_unsafe_paths_are_refused(raw):
    with pytest.raises(UnsafeFilename):
        clean_path(raw)
    assert clean_path("./pkg//mod.py") == "pkg/mod.py"


def test_several_files_in_one_fence_are_split_into_one_block_per_file():
    from agents.loop.codeblocks import extract_code_blocks
    text = reply("# filename: calc.py\ndef add(a, b):\n    return a + b\n\n\n# filename: test_calc.py\nimport calc\n",
                 "print(1)\n# filename: not_a_file.py")
    blocks = extract_code_blocks(text)
    assert [b.filename for b in blocks] == ["calc.py", "test_calc.py", None]
    assert blocks[0].code == "# filename: calc.py\ndef add(a, b):\n    return a + b\n"


def test_a_change_to_docstrings_or_comments_alone_is_still_a_repeat():
    memory = RepeatMemory()
    memory.remember(reply(WRONG), 1, 1, "checks failed", ["calc.py"])
    assert memory.find(reply('# filename: calc.py\ndef add(a, b):\n    """Add."""\n    return a * b  # ok\n'))


def test_a_repeated_page_is_asked_for_again_as_a_page():
    page = "```html\n<!-- filename: index.html -->\n<p>Hello</p>\n```"
    memory = RepeatMemory()
    memory.remember(page, 1, 1, "checks failed", ["index.html"])
    text = memory.find(page).feedback(reask=False)
    assert "```html block whose first line is `<!-- filename: <its path> -->`" in text and "```python" not in text


# -- both executors ------------------------------------------------------------------------------------------

@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def executor(request, tmp_path):
    if request.param == "docker":
        request.getfixturevalue("sandbox_image")
    cfg = SandboxConfig(kind=request.param, image=IMAGE, timeout=10, disk="1m")
    ex = make_executor(cfg, tmp_path / "ws", f"files-test-{uuid.uuid4().hex[:6]}")
    ex.start()
    yield ex
    ex.stop()


def test_a_named_python_file_is_saved_then_run_and_a_data_file_only_saved(executor):
    ws = executor.workspace
    r = executor.execute("# filename: pkg/mod.py\nVALUE = 41\nprint('module ran')")
    assert (r.exit_code, r.filename, r.saved_only) == (0, "pkg/mod.py", False) and "module ran" in r.output
    assert (ws / "pkg" / "mod.py").read_text().startswith("# filename: pkg/mod.py\n")  # kept whole, as AG2
    r = executor.execute("# filename: data/config.json\n{\"n\": 1}")
    assert (r.exit_code, r.saved_only, r.output) == (0, True, "saved data/config.json (9 bytes)")
    assert (ws / "data" / "config.json").read_text() == "{\"n\": 1}\n"  # the comment line would break the JSON
    r = executor.execute("import json, pkg.mod\nprint(pkg.mod.VALUE + json.load(open('data/config.json'))['n'])")
    assert r.exit_code == 0 and r.output.split() == ["module", "ran", "42"] and r.filename == "block01.py"


def test_a_module_saved_again_at_the_same_size_within_a_second_is_not_run_stale(executor):
    for op, expected in (("*", "6"), ("+", "5")):  # same size, same second: a .pyc would hide the change
        executor.execute(f"# filename: calc.py\ndef add(a, b):\n    return a {op} b")
        r = executor.execute("import calc\nprint(calc.add(2, 3))")
        assert r.output.strip() == expected


def test_a_module_of_a_package_runs_as_python_m_would_so_its_imports_work(executor):
    r = executor.execute("# filename: shop/__init__.py\nfrom .cart import total\n")
    assert r.saved_only and r.output == "saved shop/__init__.py (53 bytes)"  # an __init__ is saved, not run
    executor.execute("# filename: shop/cart.py\ndef total(xs):\n    return sum(xs)\n")
    r = executor.execute("# filename: shop/coupons.py\nfrom .cart import total\nfrom shop.cart import total as t\n"
                         "print('coupons', total([1, 2]) + t([3]), __name__)")
    assert r.exit_code == 0 and r.output.strip() == "coupons 6 __main__", r.output
    r = executor.execute("# filename: tools/report.py\nimport sys\nprint(sys.path[0].endswith('tools'))")
    assert r.output.strip() == "True"  # not in a package: run as the file, as AG2 runs it


def test_a_test_file_in_a_subfolder_imports_the_project_package(executor):
    # seen with the embedded model: `# filename: tests/test_metrics.py` then `from textkit.metrics import ...`
    executor.execute("# filename: textkit/__init__.py\n")
    executor.execute("# filename: textkit/metrics.py\ndef words(t):\n    return len(t.split())\n")
    r = executor.execute("# filename: tests/test_metrics.py\nfrom textkit.metrics import words\n"
                         "import sys\nassert words('a b') == 2\nprint('ok', sys.path[0].endswith('tests'))")
    assert r.exit_code == 0 and r.output.strip() == "ok True", r.output


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_saved_test_file_is_run_by_pytest_and_a_script_named_test_runs_as_a_script(executor):
    executor.execute("# filename: calc.py\ndef add(a, b):\n    return a - b\n")
    r = executor.execute("# filename: tests/test_calc.py\nfrom calc import add\n\n\ndef test_add():\n"
                         "    assert add(2, 3) == 5\n")
    assert r.exit_code == 1 and "holds pytest tests" in r.output and "1 failed" in r.output, r.output
    assert "assert -1 == 5" in r.output  # pytest's own report, not a script that only defined its test
    r = executor.execute("# filename: test_script.py\nfrom calc import add\nprint('sum', add(2, 3))\n")
    assert (r.exit_code, r.output.strip()) == (0, "sum -1")  # no test in it: an ordinary script
    r = executor.execute("# filename: test_main.py\ndef test_x():\n    pass\n\n"
                         "if __name__ == '__main__':\n    print('ran itself')\n")
    assert r.output.strip() == "ran itself"  # it says how it runs


def test_a_refused_path_writes_nothing_and_says_why_in_one_line(executor):
    before = sorted(p.name for p in executor.workspace.rglob("*"))
    for code, words in [("# filename: /tmp/x.py\nprint(1)", "absolute path"),
                        ("# filename: ../x.py\nprint(1)", "leaves the workspace"),
                        ("# filename: .codeduet_checks/test_x.py\nprint(1)", "checks' folder"),
                        ("# filename: big.txt\n" + "x" * (2 << 20), "over the workspace's size limit (1m)"),
                        ("# filename:\nprint(1)", "names no file")]:
        r = executor.execute(code)
        assert r.exit_code == 1 and r.refused and words in r.output and "\n" not in r.output.strip()
    assert sorted(p.name for p in executor.workspace.rglob("*")) == before


def test_a_script_named_as_a_data_file_runs_as_a_script_and_the_data_is_kept(executor):
    executor.execute("# filename: inventory.json\n{\"items\": []}")
    r = executor.execute("# filename: inventory.json\nimport json\nprint(len(json.load(open('inventory.json'))))")
    assert r.exit_code == 0 and r.filename == "block01.py" and r.output.split("\n")[-2] == "1"
    assert r.output.startswith("[codeduet: the block's first line names inventory.json, but the block is Python code")
    r = executor.execute("# filename: inventory.json\n{items: oops")
    assert r.exit_code == 1 and r.refused and "not valid JSON" in r.output  # neither JSON nor Python: refused
    assert (executor.workspace / "inventory.json").read_text() == '{"items": []}\n'


def test_a_path_through_a_symlink_is_refused(executor, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = str(outside) if executor.describe()["kind"] == "local" else "/tmp"
    executor.execute(f"import os\nos.symlink({target!r}, 'out')")
    r = executor.execute("# filename: out/evil.py\nprint('evil')")
    assert r.exit_code == 1 and "symlink out" in r.output and "evil" not in r.output.replace("evil.py", "")
    assert list(outside.iterdir()) == []


# -- the conversation -----------------------------------------------------------------------------------------

@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_reply_saves_the_module_and_runs_it_and_the_checks_judge_the_file(calc_scenario, workspaces):
    result = run_scenario(load_scenario(calc_scenario([reply(FIXED, RUN_TESTS)])), RunOptions())
    assert result.status == "success", result.reason
    t = load_transcript(result.run_dir)
    outcome = t["messages"][2]["outcome"]
    assert outcome["written"] == ["calc.py"]
    assert [f["path"] for f in outcome["files"]] == ["calc.py"] and outcome["files"][0]["change"] == "changed"
    assert "add(2, 3) = 5" in outcome["executions"][1]["output"]
    assert (result.run_dir / "workspace" / "calc.py").read_text() == FIXED


def test_a_saved_module_whose_own_run_fails_does_not_stop_the_test_block_after_it(calc_scenario, workspaces):
    cli = ("# filename: calc.py\nimport sys\n\ndef add(a, b):\n    return a + b\n\nif __name__ == '__main__':\n"
           "    sys.exit('usage: calc A B')")
    result = run_scenario(load_scenario(calc_scenario([reply(cli, RUN_TESTS)])), RunOptions())
    assert result.status == "success", result.reason
    execs = load_transcript(result.run_dir)["messages"][2]["outcome"]["executions"]
    assert [e["exit_code"] for e in execs] == [1, 0] and "add(2, 3) = 5" in execs[1]["output"]


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_fix_sent_as_a_throwaway_script_is_named_in_the_feedback(calc_scenario, workspaces):
    script = "def add(a, b):\n    return a + b\n\nprint(add(2, 3))"  # the fix, without `# filename: calc.py`
    result = run_scenario(load_scenario(calc_scenario([reply(script), reply(FIXED)])), RunOptions())
    assert result.status == "success", result.reason
    feedback = load_transcript(result.run_dir)["messages"][2]["content"]
    assert "your script defines add(), which calc.py also defines, but it ran as a throwaway script" in feedback
    assert "first line is `# filename: calc.py`" in feedback


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_failed_check_shows_the_changed_files_and_the_saved_text(calc_scenario, workspaces):
    result = run_scenario(load_scenario(calc_scenario([reply(WRONG), reply(FIXED)])), RunOptions())
    assert result.status == "success", result.reason
    feedback = load_transcript(result.run_dir)["messages"][2]["content"]
    assert "Files changed in the working directory:\n- changed (52 B): calc.py" in feedback
    assert "The files your reply saved, as they are now, each shown under its path:\n\ncalc.py\n```\n" in feedback
    assert "return a * b" in feedback
    assert "# filename: <its path>" in feedback  # asked for the whole file back, not a script
    assert "pytest (hidden tests): 'test_calc_hidden.py'" in feedback  # not a path the model could write to


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_file_block_equal_to_the_file_is_reasked_not_run(calc_scenario, workspaces):
    unchanged = "# filename: calc.py\n" + BUGGY  # the starting file, sent back as is
    result = run_scenario(load_scenario(calc_scenario([reply(RUN_TESTS), reply(unchanged), reply(FIXED)],
                                                        strategy={"repeat_reasks": 1})),
                          RunOptions())
    assert result.status == "success", result.reason
    t = load_transcript(result.run_dir)
    (rejected,) = t["rejected_replies"]
    assert rejected["reason"] == "repeat" and "calc.py already holds exactly this content" in rejected["follow_up"]
    assert "assert -1 == 5" in rejected["follow_up"]  # what the checks said of that content
    assert t["totals"]["executions"] == 2  # the script, then the fixed file; the unchanged file never ran


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_starting_file_sent_back_unchanged_runs_once_so_the_checks_speak(calc_scenario, workspaces):
    unchanged = "# filename: calc.py\n" + BUGGY
    result = run_scenario(load_scenario(calc_scenario([reply(unchanged), reply(unchanged), reply(FIXED)],
                                                        strategy={"repeat_reasks": 1})),
                          RunOptions())
    assert result.status == "success", result.reason
    t = load_transcript(result.run_dir)
    assert "assert -1 == 5" in t["messages"][2]["content"]  # nothing had run: it ran, and the model sees why
    (rejected,) = t["rejected_replies"]  # the second time it is a repeat of turn 1
    assert rejected["reason"] == "repeat" and rejected["repeats"]["turn"] == 1


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_repeat_memory_counts_files_across_attempts(calc_scenario, workspaces):
    # attempt 1 saves WRONG; attempt 2 starts from the buggy file and sends WRONG again: a repeat, re-asked
    path = calc_scenario([reply(WRONG), "TERMINATE", reply(WRONG), reply(FIXED)],
                         strategy={"attempts": 2, "repeat_reasks": 1})
    result = run_scenario(load_scenario(path), RunOptions())
    t = load_transcript(result.run_dir)
    assert result.status == "success" and result.chosen_attempt == 2, result.reason
    (rejected,) = t["rejected_replies"]
    assert rejected["attempt"] == 2 and rejected["repeats"] == {"attempt": 1, "turn": 1, "summary":
                                                                t["attempts"][0]["summary"]}


def test_a_script_after_a_file_change_is_not_a_repeat():
    memory = RepeatMemory()
    memory.remember(reply(WRONG, RUN_TESTS), 1, 1, "checks failed", ["calc.py"])
    assert memory.find(reply(RUN_TESTS)) is not None  # same files, same script: nothing new would happen
    assert memory.find(reply(FIXED, RUN_TESTS)) is None  # the module changed: the same test script is new
    memory.remember(reply(FIXED), 1, 2, "checks passed", ["calc.py"])
    assert memory.find(reply(RUN_TESTS)) is None  # the script never ran against the fixed module


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_replay_execute_saves_the_files_again_and_matches(calc_scenario, workspaces):
    result = run_scenario(load_scenario(calc_scenario([reply(WRONG), reply(FIXED, RUN_TESTS)])), RunOptions())
    assert result.status == "success", result.reason
    out = run_cli("replay", str(result.run_dir), "--execute")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 block(s): 3 match, 0 diverged" in out.stdout and "calc.py" in out.stdout


def test_a_task_about_python_files_is_taught_the_convention_and_a_script_task_keeps_its_prompt():
    from agents.feedback.prompts import system_message
    from agents.loop.briefing import works_on_files
    assert "# filename: path/of/the/file" in system_message(files=True)
    assert "filename" not in system_message() and "filename" not in render_from(PROMPTS, "system")
    assert works_on_files("Fix add() in calc.py.", {}) and works_on_files("Fix it.", {"pkg/calc.py": b""})
    assert not works_on_files("Count the words of text.txt.", {"text.txt": "a b"})
