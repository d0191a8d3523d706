"""changes.diff: what a run changed in its starting files, in the run folder, transcript, replay, HTML and --json."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from agents.loop.conversation import RunOptions, run_scenario
from agents.record.changes import DIFF_FILE, diff_trees, line_kinds
from agents.record.transcript import load_transcript
from agents.replay.html import render_html
from agents.replay.show import show_run
from agents.scenario.spec import load_scenario
from tests.conftest import py
from tests.helpers import run_cli
from tests.test_files_from import BINARY, make_project

EDIT = py("import os\nimport shop.price\n"
          "src = open('shop/price.py').read()\n"
          "open('shop/price.py', 'w').write(src.replace('return sum(xs)', 'return round(sum(xs), 2)  # <r> & \"q\"'))\n"
          "open('shop/discount.py', 'w').write('RATE = 0.1\\n')\n"
          "os.remove('shop/deep/er/leaf.txt')\n"
          "open('data.bin', 'ab').write(bytes([0, 255]))\n"
          "print('edited')")
PRICE_HUNK = ("diff --git a/shop/price.py b/shop/price.py\n--- a/shop/price.py\n+++ b/shop/price.py\n"
              "@@ -1,2 +1,2 @@\n def total(xs):\n-    return sum(xs)\n+    return round(sum(xs), 2)  # <r> & \"q\"\n")
CHANGED = [{"path": "data.bin", "change": "modified", "added": None, "removed": None, "size": len(BINARY) + 2},
           {"path": "shop/deep/er/leaf.txt", "change": "deleted", "added": 0, "removed": 1, "size": 5},
           {"path": "shop/discount.py", "change": "created", "added": 1, "removed": 0, "size": 11},
           {"path": "shop/price.py", "change": "modified", "added": 1, "removed": 1, "size": 57}]


def cli_run(path: Path, ws: Path) -> dict:
    """`run --json` as a real subprocess: its summary line."""
    proc = run_cli("run", str(path), "--json", "--workspace", str(ws))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_run_that_edits_a_project_leaves_a_diff_everywhere(tmp_path, scenario_file):
    make_project(tmp_path)
    summary = cli_run(scenario_file([EDIT], files_from="proj", sandbox={"kind": "local"}), tmp_path / "ws")
    assert summary["changed_files"] == [{"path": f["path"], "change": f["change"]} for f in CHANGED]
    run_dir = Path(summary["run_dir"])
    diff = (run_dir / DIFF_FILE).read_text()
    assert diff == ("Binary file data.bin modified (1.0 KiB)\n"
                    "diff --git a/shop/deep/er/leaf.txt b/shop/deep/er/leaf.txt\ndeleted file mode 100644\n"
                    "--- a/shop/deep/er/leaf.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-leaf\n"
                    "diff --git a/shop/discount.py b/shop/discount.py\nnew file mode 100644\n"
                    "--- /dev/null\n+++ b/shop/discount.py\n@@ -0,0 +1 @@\n+RATE = 0.1\n" + PRICE_HUNK)
    assert "block01" not in diff and "__pycache__" not in diff  # the script and the import's cache are codeduet's
    t = load_transcript(run_dir)
    assert t["changed_files"] == CHANGED

    shown = run_cli("replay", str(run_dir))
    assert shown.returncode == 0 and "changes (4 files)" in shown.stdout and PRICE_HUNK in shown.stdout
    out = io.StringIO()
    show_run(Console(file=out, force_terminal=True, color_system="standard", width=200), t)
    assert "\x1b[32m+    return round(sum(xs), 2)" in out.getvalue()  # green
    assert "\x1b[31m-    return sum(xs)" in out.getvalue() and "\x1b[36m@@ -1,2 +1,2 @@" in out.getvalue()

    page = render_html(t)
    assert '<h2>changes (4 files)</h2>' in page
    assert '<span class="add">+    return round(sum(xs), 2)  # &lt;r&gt; &amp; &quot;q&quot;</span>' in page
    assert '<span class="del">-    return sum(xs)</span>' in page and "<r>" not in page
    assert '<span class="note">Binary file data.bin modified (1.0 KiB)</span>' in page


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_diff_applies_with_git(tmp_path, workspaces, scenario_file):
    proj = make_project(tmp_path)
    result = run_scenario(load_scenario(scenario_file([EDIT], files_from="proj", sandbox={"kind": "local"})),
                          RunOptions())
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    subprocess.run(["git", "-C", str(proj), "apply", str(result.run_dir / DIFF_FILE)], check=True)
    for rel in ("shop/price.py", "shop/discount.py"):
        assert (proj / rel).read_text() == (result.run_dir / "workspace" / rel).read_text()
    assert not (proj / "shop/deep/er/leaf.txt").exists()


def test_a_run_that_changes_nothing_writes_no_diff(tmp_path, workspaces, scenario_file):
    make_project(tmp_path)
    result = run_scenario(load_scenario(scenario_file([py("print(open('README.md').read())")], files_from="proj",
                                                      sandbox={"kind": "local"})), RunOptions())
    assert result.status == "success" and result.changed_files == []
    assert not (result.run_dir / DIFF_FILE).exists() and load_transcript(result.run_dir)["changed_files"] == []
    out = io.StringIO()
    show_run(Console(file=out, width=120), load_transcript(result.run_dir))
    assert "changes (" not in out.getvalue() and 'class="changes"' not in render_html(load_transcript(result.run_dir))


def test_the_kept_attempt_is_diffed(tmp_path, workspaces, scenario_file):
    spoil = py("open('a.txt', 'w').write('attempt 1\\n')\nraise SystemExit(1)")
    path = scenario_file([spoil, py("open('b.txt', 'w').write('attempt 2\\n')")], sandbox={"kind": "local"},
                         strategy={"attempts": 2}, user_proxy={"max_consecutive_auto_reply": 0})
    result = run_scenario(load_scenario(path), RunOptions())
    assert result.chosen_attempt == 2
    assert [f["path"] for f in result.changed_files] == ["b.txt"]


def test_text_edge_cases_diff_like_git():
    text, changed = diff_trees({"n.txt": b"a", "sql.txt": b"-- one\nx\n", "e": b""},
                               {"n.txt": b"a\n", "sql.txt": b"x\n", "e2": b"", "big.txt": b"x" * (2 << 20)})
    assert "-a\n\\ No newline at end of file\n+a\n" in text
    assert "diff --git a/e b/e\ndeleted file mode 100644\ndiff --git a/e2 b/e2\nnew file mode 100644\n" in text
    assert "Binary file big.txt created (2.0 MiB)" in text  # too large to diff: listed by size
    lines = text.split("\n")
    assert line_kinds(lines)[lines.index("--- one")] == "del"  # a removed '-- one', not a file header
    assert {f["path"]: f["change"] for f in changed} == {"big.txt": "created", "e": "deleted", "e2": "created",
                                                        "n.txt": "modified", "sql.txt": "modified"}


@pytest.mark.docker
def test_execute_and_resume_work_after_the_folder_is_gone(tmp_path, sandbox_image, workspaces, scenario_file):
    proj = make_project(tmp_path)
    check = py("import os\nprint(os.path.exists('shop/deep/er/leaf.txt'))\nprint(open('shop/price.py').read())\n"
               "open('notes.txt', 'w').write('resumed\\n')")
    path = scenario_file([EDIT, check], files_from="proj")
    parent = run_scenario(load_scenario(path), RunOptions()).run_dir
    assert (parent / "workspace" / "data.bin").read_bytes() == BINARY + bytes([0, 255])  # binary through Docker
    assert [f["path"] for f in load_transcript(parent)["changed_files"]] == [f["path"] for f in CHANGED]
    shutil.rmtree(proj)

    executed = run_cli("replay", str(parent), "--execute")
    assert executed.returncode == 0 and "1 match, 0 diverged" in executed.stdout, executed.stdout + executed.stderr
    resumed = run_cli("replay", str(parent), "--resume", "--message", "Check the files.")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    child = next(r for r in (workspaces / "t").iterdir() if r != parent)
    output = load_transcript(child)["messages"][2]["outcome"]["executions"][0]["output"]
    assert output.startswith("False\n") and "round(sum(xs), 2)" in output  # the parent's workspace won
    assert load_transcript(child)["changed_files"] == [
        {"path": "notes.txt", "change": "created", "added": 1, "removed": 0, "size": 8}]  # against its own start
