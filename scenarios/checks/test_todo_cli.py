"""Acceptance check for todo_cli.yaml: todo.py is run as a command, in a scratch folder with its own todo.json."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path.cwd() / "todo.py"
START = [{"id": 1, "text": "buy milk", "done": False}, {"id": 2, "text": "call the bank", "done": True}]


@pytest.fixture
def folder(tmp_path):
    assert TOOL.is_file(), "todo.py is not in the workspace"
    shutil.copy(TOOL, tmp_path / "todo.py")
    (tmp_path / "todo.json").write_text(json.dumps(START, indent=2))
    return tmp_path


def todo(folder, *args):
    return subprocess.run([sys.executable, "todo.py", *args], cwd=folder, capture_output=True, text=True, timeout=20)


def lines(text):
    return [ln.rstrip() for ln in text.strip().splitlines()]


def test_list(folder):
    result = todo(folder, "list")
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout) == ["1 [ ] buy milk", "2 [x] call the bank"]


def test_no_command_lists(folder):
    result = todo(folder)
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout) == ["1 [ ] buy milk", "2 [x] call the bank"]


def test_add_saves_with_the_next_id(folder):
    result = todo(folder, "add", "water the plants")
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout) == ["added 3: water the plants"]
    saved = json.loads((folder / "todo.json").read_text())
    assert saved == START + [{"id": 3, "text": "water the plants", "done": False}]
    assert lines(todo(folder, "list").stdout)[-1] == "3 [ ] water the plants"


def test_next_id_is_largest_plus_one(folder):
    (folder / "todo.json").write_text(json.dumps([{"id": 5, "text": "a", "done": False},
                                                  {"id": 2, "text": "b", "done": False}]))
    assert lines(todo(folder, "add", "c").stdout) == ["added 6: c"]
    assert lines(todo(folder, "list").stdout) == ["2 [ ] b", "5 [ ] a", "6 [ ] c"]


def test_done_marks_and_saves(folder):
    result = todo(folder, "done", "1")
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout) == ["done 1: buy milk"]
    saved = json.loads((folder / "todo.json").read_text())
    assert saved[0] == {"id": 1, "text": "buy milk", "done": True}
    assert lines(todo(folder, "list").stdout)[0] == "1 [x] buy milk"


def test_done_with_unknown_id_fails_cleanly(folder):
    before = (folder / "todo.json").read_text()
    result = todo(folder, "done", "7")
    assert result.returncode == 1, f"exit status {result.returncode}, expected 1"
    assert "error: no task 7" in result.stderr
    assert "Traceback" not in result.stderr
    assert (folder / "todo.json").read_text() == before


def test_empty_list(folder):
    (folder / "todo.json").write_text("[]")
    assert lines(todo(folder, "list").stdout) == ["no tasks"]


def test_missing_file_starts_empty(folder):
    (folder / "todo.json").unlink()
    assert lines(todo(folder, "list").stdout) == ["no tasks"]
    assert lines(todo(folder, "add", "first").stdout) == ["added 1: first"]
    assert json.loads((folder / "todo.json").read_text()) == [{"id": 1, "text": "first", "done": False}]
