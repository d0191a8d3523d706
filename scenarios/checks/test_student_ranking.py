"""Acceptance check for student_ranking.yaml: students.csv as given, ranking.csv sorted with averages."""

import csv
from pathlib import Path


def read(name):
    with Path(name).open(newline="") as f:
        return list(csv.DictReader(f))


def test_students_csv():
    rows = read("students.csv")
    assert list(rows[0].keys()) == ["name", "math", "physics", "chemistry"]
    assert [r["name"].strip() for r in rows] == ["Alice", "Bob", "Chen", "Dana", "Eve"]
    assert [int(r["physics"]) for r in rows] == [92, 68, 85, 74, 95]


def test_ranking_csv():
    rows = read("ranking.csv")
    assert list(rows[0].keys()) == ["name", "average"], f"header is {list(rows[0].keys())}, expected name,average"
    got = [(r["name"].strip(), round(float(r["average"]), 1)) for r in rows]
    expected = [("Chen", 89.3), ("Eve", 88.0), ("Alice", 86.3), ("Bob", 74.7), ("Dana", 71.0)]
    assert got == expected, f"rows are {got}, expected {expected}"
