"""Acceptance check for inventory_status.yaml: inventory.json was updated in place, and the script is idempotent."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

ORIGINAL = [
    {"sku": "A100", "name": "USB-C cable", "qty": 42, "reorder_level": 20},
    {"sku": "A101", "name": "HDMI cable", "qty": 8, "reorder_level": 16},
    {"sku": "A102", "name": "Wireless mouse", "qty": 0, "reorder_level": 10},
    {"sku": "A103", "name": "Keyboard", "qty": 10, "reorder_level": 10},
    {"sku": "A104", "name": "Laptop stand", "qty": 0, "reorder_level": 5, "discontinued": True},
    {"sku": "A105", "name": "Webcam", "qty": 12, "reorder_level": 12},
    {"sku": "A106", "name": "Headset", "qty": 30, "reorder_level": 8, "discontinued": False},
    {"sku": "A107", "name": "Monitor 27in", "qty": 3, "reorder_level": 4, "discontinued": True},
]
STATUS = {"A100": "ok", "A101": "low", "A102": "out", "A103": "low", "A104": "discontinued", "A105": "low",
          "A106": "ok", "A107": "discontinued"}
FILE = Path("inventory.json")


def load():
    data = json.loads(FILE.read_text())
    assert isinstance(data, dict) and isinstance(data.get("items"), list), \
        'inventory.json must still be an object {"warehouse": ..., "items": [...]}'
    return data


def test_statuses():
    got = {item.get("sku"): item.get("status") for item in load()["items"]}
    wrong = {sku: (got.get(sku), want) for sku, want in STATUS.items() if got.get(sku) != want}
    assert not wrong, f"wrong status (got, expected) for {wrong}"


def test_everything_else_is_kept():
    data = load()
    assert data.get("warehouse") == "Leeds"
    assert sorted(data) == ["items", "warehouse"], f"top-level keys are {sorted(data)}"
    items = data["items"]
    assert [i.get("sku") for i in items] == [i["sku"] for i in ORIGINAL], "the items must keep their order"
    for item, before in zip(items, ORIGINAL):
        rest = {k: v for k, v in item.items() if k != "status"}
        assert rest == before, f"{before['sku']}: fields other than status changed: {rest} (was {before})"


def test_indented_with_two_spaces():
    text = FILE.read_text()
    assert '\n  "warehouse"' in text or '\n  "items"' in text, "inventory.json must be written with indent=2"


def test_second_run_changes_nothing(tmp_path):
    shutil.copy("update_status.py", tmp_path / "update_status.py")
    shutil.copy(FILE, tmp_path / "inventory.json")
    result = subprocess.run([sys.executable, "update_status.py"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=20)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "inventory.json").read_text()) == load(), "a second run changed inventory.json"
