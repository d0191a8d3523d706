"""Acceptance check for timesheet_hours.yaml: hours.csv has each employee's weekly hours and overtime."""

import csv
from pathlib import Path

EXPECTED = [("Ana", 36.58, 0.0), ("Ben", 39.33, 0.0), ("Chloe", 41.75, 1.75), ("Dan", 40.0, 0.0)]


def test_hours_csv():
    with Path("hours.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows, "hours.csv has no data rows"
    header = [k.strip() for k in rows[0].keys()]
    assert header == ["employee", "hours", "overtime"], f"header is {header}, expected employee,hours,overtime"
    got = [(r["employee"].strip(), round(float(r["hours"]), 2), round(float(r["overtime"]), 2)) for r in rows]
    assert got == EXPECTED, f"rows (employee, hours, overtime) are {got}, expected {EXPECTED}"
