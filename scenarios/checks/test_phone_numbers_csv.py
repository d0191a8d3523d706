"""Acceptance check for phone_numbers_csv.yaml: customers.csv rewritten in place, phone column normalised."""

import csv
import shutil
import subprocess
import sys
from pathlib import Path

FILE = Path("customers.csv")
EXPECTED = [
    ["id", "name", "phone", "country"],
    ["1", "Alice Smith", "+442079460958", "GB"],
    ["2", "Bernd Müller", "+49301234567", "DE"],
    ["3", "Chloé Martin", "+33142685300", "FR"],
    ["4", "Dan Brown", "+441614960000", "GB"],
    ["5", "Eva Novak", "", "DE"],
    ["6", "Frank Lee", "+447700900123", "GB"],
    ["7", "Greta Berg", "+49309876543", "DE"],
    ["8", "O'Neil, Pat", "+447700900456", "GB"],
    ["9", "Hugo Petit", "+33145678910", "FR"],
]


def rows():
    with FILE.open(newline="", encoding="utf-8") as f:
        return [row for row in csv.reader(f) if row]


def test_header_and_other_columns_kept():
    got = rows()
    assert got[0] == EXPECTED[0], f"header is {got[0]}"
    assert len(got) == len(EXPECTED), f"{len(got) - 1} data rows, expected {len(EXPECTED) - 1}"
    for row, want in zip(got[1:], EXPECTED[1:]):
        assert len(row) == 4, f"row {row} does not have 4 columns"
        assert [row[0], row[1], row[3]] == [want[0], want[1], want[3]], f"row {want[0]} changed to {row}"


def test_phone_numbers():
    got = {row[0]: row[2] for row in rows()[1:] if len(row) == 4}
    want = {row[0]: row[2] for row in EXPECTED[1:]}
    wrong = {i: (got.get(i), phone) for i, phone in want.items() if got.get(i) != phone}
    assert not wrong, f"wrong phone (got, expected) for the ids {wrong}"


def test_second_run_changes_nothing(tmp_path):
    shutil.copy("fix_phones.py", tmp_path / "fix_phones.py")
    shutil.copy(FILE, tmp_path / "customers.csv")
    result = subprocess.run([sys.executable, "fix_phones.py"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=20)
    assert result.returncode == 0, result.stderr
    with (tmp_path / "customers.csv").open(newline="", encoding="utf-8") as f:
        again = [row for row in csv.reader(f) if row]
    assert again == rows(), "a second run changed customers.csv"
