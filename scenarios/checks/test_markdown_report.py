"""Acceptance check for markdown_report.yaml: report.md holds the per-category table, aligned and formatted."""

import re
from pathlib import Path

EXPECTED = [
    ["Home", "1", "1,249.00"],
    ["Rent", "1", "1,150.00"],
    ["Groceries", "6", "569.55"],
    ["Utilities", "2", "151.00"],
    ["Dining", "4", "146.65"],
    ["Transport", "4", "57.70"],
    ["Software", "2", "47.98"],
]
TOTAL = ["**Total**", "20", "3,371.88"]


def table():
    rows = []
    for line in Path("report.md").read_text().splitlines():
        line = line.strip()
        if line.startswith("|"):
            assert line.endswith("|"), f"the table row {line!r} does not end with |"
            rows.append([cell.strip() for cell in line[1:-1].split("|")])
    assert len(rows) >= 3, f"report.md has {len(rows)} table rows starting with |, expected a header, an alignment row and data"
    return rows


def test_header_and_alignment():
    rows = table()
    assert rows[0] == ["Category", "Count", "Total"], f"header is {rows[0]}, expected ['Category', 'Count', 'Total']"
    align = rows[1]
    assert len(align) == 3, f"alignment row is {align}, expected 3 cells"
    assert re.fullmatch(r":-+", align[0]), f"alignment of Category is {align[0]!r}, expected :--- (left)"
    assert re.fullmatch(r"-+:", align[1]), f"alignment of Count is {align[1]!r}, expected ---: (right)"
    assert re.fullmatch(r"-+:", align[2]), f"alignment of Total is {align[2]!r}, expected ---: (right)"


def test_category_rows():
    rows = table()[2:]
    got = rows[:-1]
    assert got == EXPECTED, f"category rows are {got}, expected {EXPECTED} (largest total first)"


def test_total_row():
    last = table()[-1]
    assert last == TOTAL, f"last row is {last}, expected {TOTAL}"
