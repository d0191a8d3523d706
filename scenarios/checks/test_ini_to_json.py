"""Acceptance check for ini_to_json.yaml: settings.json holds every section with correctly typed values."""

import json
from pathlib import Path

EXPECTED = {
    "server": {"host": "0.0.0.0", "port": 8080, "debug": False, "workers": 4},
    "database": {"url": "postgres://app@db.internal:5432/app", "pool_size": 10, "timeout": 2.5, "ssl": True,
                 "retries": 3},
    "features": {"new_checkout": "yes", "beta_banner": False, "max_upload_mb": 25, "greeting": "Hello, world"},
    "locale": {"language": "en-GB", "utc_offset": -5},
}


def load():
    data = json.loads(Path("settings.json").read_text())
    assert isinstance(data, dict), f"settings.json must hold a JSON object, it holds a {type(data).__name__}"
    return data


def test_sections_and_keys():
    data = load()
    assert sorted(data) == sorted(EXPECTED), f"sections are {sorted(data)}, expected {sorted(EXPECTED)}"
    for section, values in EXPECTED.items():
        assert isinstance(data[section], dict), f"[{section}] must be a JSON object"
        assert sorted(data[section]) == sorted(values), \
            f"[{section}] has the keys {sorted(data[section])}, expected {sorted(values)}"


def test_values_and_types():
    data = load()
    for section, values in EXPECTED.items():
        for key, expected in values.items():
            got = data[section][key]
            assert got == expected and type(got) is type(expected), \
                f"[{section}] {key} is {got!r} ({type(got).__name__}), expected {expected!r} ({type(expected).__name__})"
