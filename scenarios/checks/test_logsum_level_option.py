"""Acceptance check for logsum_level_option.yaml: logsum.py is run as a command on scratch log files."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path.cwd() / "logsum.py"
LOG = """\
2024-06-02 08:00:00 INFO boot
2024-06-02 08:00:01 DEBUG config loaded
2024-06-02 08:00:02 ERROR no route to host
2024-06-02 08:00:03 INFO ready
2024-06-02 08:00:04 CRITICAL out of memory
2024-06-02 08:00:05 INFO request served
"""


@pytest.fixture
def folder(tmp_path):
    assert TOOL.is_file(), "logsum.py is not in the workspace"
    shutil.copy(TOOL, tmp_path / "logsum.py")
    (tmp_path / "app.log").write_text(LOG)
    (tmp_path / "other.log").write_text("2024-06-02 09:00:00 WARNING disk 85%\n2024-06-02 09:00:01 WARNING disk 91%\n")
    return tmp_path


def logsum(folder, *args):
    return subprocess.run([sys.executable, "logsum.py", *args], cwd=folder, capture_output=True, text=True,
                          timeout=20)


def lines(text):
    return [ln.rstrip() for ln in text.strip().splitlines()]


def test_output_without_level_is_unchanged(folder):
    result = logsum(folder)
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout) == ["CRITICAL 1", "DEBUG 1", "ERROR 1", "INFO 3"]
    assert lines(logsum(folder, "other.log").stdout) == ["WARNING 2"]


def test_level_option(folder):
    result = logsum(folder, "--level", "INFO")
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout) == ["INFO 3"]


def test_level_is_case_insensitive(folder):
    assert lines(logsum(folder, "--level", "error").stdout) == ["ERROR 1"]
    assert lines(logsum(folder, "--level", "Critical").stdout) == ["CRITICAL 1"]


def test_level_with_a_log_file_argument(folder):
    assert lines(logsum(folder, "other.log", "--level", "warning").stdout) == ["WARNING 2"]


def test_level_that_does_not_occur_prints_zero(folder):
    result = logsum(folder, "--level", "warning")
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout) == ["WARNING 0"]


def test_missing_log_file(folder):
    result = logsum(folder, "nope.log")
    assert result.returncode == 2, f"exit status {result.returncode}, expected 2"
    assert "error: cannot read nope.log" in result.stderr
    assert "Traceback" not in result.stderr


def test_count_levels_still_works():
    sys.path.insert(0, str(TOOL.parent))
    from logsum import count_levels
    lines_ = ["2024-05-01 10:00:01 INFO started", "2024-05-01 10:00:02 ERROR boom", "2024-05-01 10:00:03 INFO done"]
    assert count_levels(lines_) == {"INFO": 2, "ERROR": 1}
    assert count_levels(["", "garbage"]) == {}
