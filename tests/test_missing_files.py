"""A program that reads a file the workspace does not have: the report names the path and lists what is there."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.feedback.missing_files import missing_file_note, missing_path
from agents.loop.conversation import RunOptions, run_scenario
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario


@pytest.mark.parametrize("output, path", [
    ("Traceback (most recent call last):\n  File \"block01.py\", line 1\nFileNotFoundError: [Errno 2] No such file "
     "or directory: 'data.csv'", "data.csv"),
    ("Error: ENOENT: no such file or directory, open 'input.json'\n    at Object.openSync", "input.json"),
    ("panic: open orders.txt: no such file or directory\n\ngoroutine 1 [running]:", "orders.txt"),
    ("cat: notes.md: No such file or directory", "notes.md"),
    ("python3: can't open file '/workspace/app.py': [Errno 2] No such file or directory", "/workspace/app.py"),
])
def test_the_missing_path_is_read_from_each_runtime_s_words(output, path):
    assert missing_path(output) == path


def test_nothing_missing_gives_no_note(tmp_path: Path):
    assert missing_file_note("ZeroDivisionError: division by zero", tmp_path) == ""
    assert missing_path("all good") is None


def test_the_note_lists_the_workspace_files_and_leaves_codeduet_s_own_out(tmp_path: Path):
    (tmp_path / "sales.csv").write_text("city,amount\n")
    (tmp_path / "block01.py").write_text("open('data.csv')\n")
    note = missing_file_note("FileNotFoundError: [Errno 2] No such file or directory: 'data.csv'", tmp_path)
    assert "`data.csv` does not exist" in note and "- sales.csv" in note and "block01.py" not in note


def test_an_empty_workspace_says_to_use_the_task_s_text(tmp_path: Path):
    note = missing_file_note("FileNotFoundError: [Errno 2] No such file or directory: 'data.csv'", tmp_path)
    assert "holds no files" in note and "task's text" in note


READS = "```python\nimport csv\nrows = list(csv.reader(open('data.csv')))\nprint(len(rows))\n```"
INLINE = "```python\nTEXT = 'city,amount\\nOslo,3\\n'\nprint(len(TEXT.splitlines()))\n```"


def test_a_run_that_reads_a_file_that_is_not_there_is_told_which_files_are(loop_file, workspaces):
    path = loop_file([READS, INLINE], files={"sales.csv": "city,amount\nOslo,3\n"})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    report = load_transcript(result.run_dir)["messages"][2]["content"]
    assert "The file `data.csv` does not exist" in report and "- sales.csv" in report


UNSAVED = "```python\nprint('serving')\n```"
SAVED = "```python\n# filename: app.py\nprint('serving')\n```"


def test_a_check_that_runs_a_file_the_code_was_never_saved_as_says_how_to_save_it(loop_file, workspaces):
    path = loop_file([UNSAVED, SAVED], checks=[{"command": "python3 app.py"}])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    report = load_transcript(result.run_dir)["messages"][2]["content"]
    assert "The check needs the file `app.py`, which does not exist: your code ran as a throwaway script " \
           "(block01.py)" in report and "`# filename: app.py` as its first line" in report


HEADED = "```python\n# app.py: the service\nprint('serving')\n```"


def test_a_block_headed_by_the_file_the_task_names_is_saved_as_that_file(loop_file, workspaces):
    path = loop_file([HEADED], task="Write app.py, which prints serving.", checks=[{"command": "python3 app.py"}])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    assert (result.run_dir / "workspace" / "app.py").read_text().startswith("# filename: app.py\n")


PAGE_HEADED = ("```html\n// index.html: a counter page with #value\n<!DOCTYPE html>\n<html><body>"
               "<p id=\"value\">0</p></body></html>\n```")


def test_a_page_block_headed_by_the_page_the_task_names_is_saved_as_that_page(loop_file, workspaces):
    """The 1.5B heads a page `// index.html: ...` in an ```html block (all ten frontend baseline replies): it is the
    page the checks open, not a block left unsaved."""
    path = loop_file([PAGE_HEADED], task="Write index.html: a counter page.",
                     checks=[{"file_exists": "index.html"}])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    page = (result.run_dir / "workspace" / "index.html").read_text()
    assert page.startswith("<!DOCTYPE html>")  # the naming comment is not part of the page
    other = loop_file(["```html\n<!-- other.html -->\n<p>hi</p>\n```"], task="Write index.html: a page.",
                      checks=[{"file_exists": "index.html"}], name="other")
    assert run_scenario(load_scenario(other), RunOptions()).status != "success"  # a page nobody asked for: unsaved


def test_a_source_block_headed_by_the_file_the_task_names_is_saved_as_that_file(loop_file, workspaces):
    """Both React tasks' replies of the 1.5B: ```javascript headed `// Accordion.jsx`, which ran as block01.js and
    left the hidden jest test without ./Accordion.jsx. A component is saved (not run); a named .js file is saved and
    run as node runs a saved file."""
    component = "```javascript\n// Accordion.jsx\nexport function Accordion() { return <div/>; }\n```"
    server = "```javascript\n// server.js: prints ready\nconsole.log('ready');\n```"
    path = loop_file([component + "\n" + server], task="Write Accordion.jsx, then server.js, which prints ready.",
                     checks=[{"file_exists": "Accordion.jsx"}, {"stdout_contains": "ready"}],
                     sandbox={"languages": ["javascript"]})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success", result.reason
    workspace = result.run_dir / "workspace"
    assert (workspace / "Accordion.jsx").read_text().startswith("export function Accordion")
    assert (workspace / "server.js").read_text().startswith("// filename: server.js\n")
    assert not list(workspace.glob("block*"))


def test_a_comment_naming_a_file_nobody_asked_for_stays_a_comment(loop_file, workspaces):
    path = loop_file(["```python\n# helper.py: notes\nprint('serving')\n```"], task="Print serving.",
                     checks=[{"stdout_contains": "serving"}])
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.status == "success" and not (result.run_dir / "workspace" / "helper.py").exists()


def test_the_data_itself_given_as_a_file_name_is_told_to_use_stringio(tmp_path: Path):
    output = "FileNotFoundError: [Errno 2] No such file or directory: '\\ncity,amount\\nOslo,120\\n'"
    note = missing_file_note(output, tmp_path)
    assert "was given where a file name goes" in note and "io.StringIO(text)" in note and "city,amount" in note
