"""Acceptance check for ag2_default_prompt.yaml: colstats.py run as a command on a CSV file of its own."""

import subprocess
import sys
from pathlib import Path

TOOL = Path.cwd() / "colstats.py"


def colstats(folder, *args):
    return subprocess.run([sys.executable, str(TOOL), *args], cwd=folder, capture_output=True, text=True, timeout=20)


def test_statistics_of_a_column(tmp_path):
    (tmp_path / "prices.csv").write_text("item,price\na,1.5\nb,2\nc,5\n")
    result = colstats(tmp_path, "prices.csv", "price")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:4] == ["count 3", "min 1.50", "max 5.00", "mean 2.83"]


def test_a_missing_column_is_an_error(tmp_path):
    (tmp_path / "prices.csv").write_text("item,price\na,1.5\n")
    result = colstats(tmp_path, "prices.csv", "cost")
    assert result.returncode != 0 and "cost" in result.stderr
