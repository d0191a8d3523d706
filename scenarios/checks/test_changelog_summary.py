"""Acceptance check for changelog_summary.yaml: changelog.json counts the changes per category and release."""

import json
from pathlib import Path

EXPECTED = [
    ("2.1.0", "2024-05-14", {"Added": 2, "Fixed": 2}),
    ("2.0.1", "2024-04-02", {"Fixed": 3}),
    ("2.0.0", "2024-03-18", {"Changed": 2, "Removed": 1, "Fixed": 1}),
    ("1.4.2", "2024-01-30", {"Security": 1}),
    ("1.4.0", "2023-12-05", {"Added": 3, "Deprecated": 1}),
]


def test_changelog_json():
    data = json.loads(Path("changelog.json").read_text())
    assert isinstance(data, list), f"changelog.json must hold a JSON list, it holds a {type(data).__name__}"
    versions = [str(item.get("version")).strip() for item in data]
    assert versions == [v for v, _, _ in EXPECTED], \
        f"versions are {versions}, expected {[v for v, _, _ in EXPECTED]} (newest first, Unreleased skipped)"
    for item, (version, date, changes) in zip(data, EXPECTED):
        assert str(item.get("date")).strip() == date, f"{version}: date is {item.get('date')!r}, expected {date!r}"
        got = {str(k).strip(): v for k, v in dict(item.get("changes") or {}).items()}
        assert got == changes, f"{version}: changes are {got}, expected {changes}"
