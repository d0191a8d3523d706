"""What a person reads at 80 columns or through a pipe: the status line, paths and ids are never cut, code is shown as
it runs (fences kept, never re-flowed), output lines stay lines; with no terminal, plain text with no boxes
(issue 20 item 4). Real CLI runs (scripted model, Docker sandbox)."""

from __future__ import annotations

import os
import re
import sys

import pexpect
import pytest

from agents.record.transcript import load_transcript
from tests.conftest import ROOT
from tests.helpers import run_cli

pytestmark = pytest.mark.docker

LONG = "print('x' * 3)  # " + "a long comment that goes on past eighty columns " * 2 + "END_OF_LINE"
CODE = f"{LONG}\nimport sys\nprint('E   assert 1 == 2', file=sys.stderr)\n" \
       "print('E    +  where 1 = f()', file=sys.stderr)\nsys.exit(1)"
REPLY = f"The script:\n```python\n{CODE}\n```"
BOXES = set("│┃╭╰━─┏└")


def scenario(scenario_file, name: str = "narrow", attempts: int = 1):
    replies = [REPLY, "I give up. TERMINATE", REPLY.replace("exit(1)", "exit(2)"), "I give up. TERMINATE"]
    return scenario_file(replies[:2 * attempts], name=name, termination={"contains": "TERMINATE"},
                         strategy={"attempts": attempts}, checks=[{"stdout_contains": "never printed"}])


def test_through_a_pipe_at_80_columns_output_is_plain_and_whole(sandbox_image, scenario_file, tmp_path):
    ws = tmp_path / "ws"
    proc = run_cli("run", str(scenario(scenario_file)), "--workspace", str(ws), env={"COLUMNS": "80"})
    out = proc.stdout
    assert proc.returncode == 1, proc.stderr
    assert not BOXES & set(out), out  # no terminal: no panels, no rules
    lines = out.splitlines()
    # the code exactly as it runs: fences kept, the long line whole
    start = lines.index("```python")
    assert lines[start + 1:start + 1 + len(CODE.splitlines())] == CODE.splitlines()
    assert lines[start + 1 + len(CODE.splitlines())] == "```"
    # the output's E lines are lines, and the request after them starts its own line
    assert "E   assert 1 == 2" in lines and "E    +  where 1 = f()" in lines
    assert any(line.startswith("Fix the cause of the error.") for line in lines), out
    # the closing status, whole
    assert "failed · the conversation ended after a failed execution or failed checks" in lines
    run_dir = next(iter((ws / "narrow").iterdir()))
    assert lines[-1] == f"run: {run_dir} status=failed"
    replay = run_cli("replay", str(run_dir), env={"COLUMNS": "80"})
    assert replay.returncode == 0 and not BOXES & set(replay.stdout)
    assert LONG in replay.stdout.splitlines() and f"run          {run_dir}" in replay.stdout.splitlines()


def test_a_batch_table_at_80_columns_keeps_names_and_paths(sandbox_image, scenario_file, tmp_path):
    ws = tmp_path / "a-workspace-folder-with-a-long-name"
    first, second = scenario(scenario_file, "first-scenario-name"), scenario(scenario_file, "second-scenario-name")
    proc = run_cli("run", str(first), str(second), "--workspace", str(ws), env={"COLUMNS": "80"})
    assert proc.returncode == 1, proc.stderr
    for path in (first, second):
        run_dir = next(iter((ws / path.stem).iterdir()))
        row = next(line for line in proc.stdout.splitlines() if str(run_dir) in line)
        assert row.split() == [str(path), "failed", "1", "2", "1", row.split()[5], str(run_dir)], row


def test_in_an_80_column_terminal_code_is_cropped_not_reflowed_and_the_status_is_whole(sandbox_image,
                                                                                        scenario_file, tmp_path):
    ws = tmp_path / "ws"
    child = pexpect.spawn(sys.executable, [str(ROOT / "run.py"), "run", str(scenario(scenario_file, attempts=2)),
                                           "--workspace", str(ws)],
                          env={**os.environ, "TERM": "xterm", "NO_COLOR": "1"}, encoding="utf-8", timeout=120,
                          dimensions=(40, 80))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", child.before).replace("\r", "")
    lines = text.splitlines()
    panel = [i for i, line in enumerate(lines) if "print('x' * 3)" in line and line.startswith("│")]
    assert panel, text
    for i in panel:  # cropped at the panel's edge: the next panel line is the code's next line, not the rest
        assert len(lines[i]) <= 80 and "import sys" in lines[i + 1], lines[i:i + 2]
    assert "END_OF_LINE" not in text.split("running block")[0].split("assistant · assistant")[-1]
    run_dir = next(iter((ws / "narrow").iterdir()))
    reason = load_transcript(run_dir)["reason"]
    assert len(reason) > 80 and reason.startswith("no attempt succeeded (2 of 2 tried); kept attempt 1")
    footer = text[text.rindex("I give up. TERMINATE"):]
    assert f"failed · {reason}" in footer and "…" not in footer, footer  # whole (the terminal wraps it)
    assert f"run: {run_dir} status=failed" in footer
