"""Acceptance check for sales_by_region.yaml: region_revenue.csv holds the right totals, highest first."""

import csv
from pathlib import Path

EXPECTED = [("South", 1127.30), ("East", 1065.31), ("West", 956.85), ("North", 786.34)]


def test_region_revenue_csv():
    with Path("region_revenue.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows, "region_revenue.csv has no data rows"
    assert list(rows[0].keys()) == ["region", "revenue"], f"header is {list(rows[0].keys())}, expected region,revenue"
    got = [(r["region"].strip(), round(float(r["revenue"]), 2)) for r in rows]
    assert got == EXPECTED, f"rows are {got}, expected {EXPECTED} (highest revenue first)"
