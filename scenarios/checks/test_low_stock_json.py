"""Acceptance check for low_stock_json.yaml: low_stock.json lists the six short items, largest shortfall first."""

import json
from pathlib import Path


def test_low_stock_json():
    items = json.loads(Path("low_stock.json").read_text())
    assert isinstance(items, list), "low_stock.json must hold a JSON list"
    got = [(str(i["sku"]), int(i["quantity"]), int(i["shortfall"])) for i in items]
    expected = [("A101", 8, 8), ("A102", 3, 7), ("A109", 1, 6), ("A104", 0, 5), ("A106", 6, 2), ("A107", 2, 1)]
    assert got == expected, f"(sku, quantity, shortfall) are {got}, expected {expected}"
    assert items[0]["name"] == "HDMI cable"
