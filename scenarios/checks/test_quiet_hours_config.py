"""Acceptance check for quiet_hours_config.yaml: config.json has the new setting and notify.should_notify honours
quiet hours as the task states."""

import json
from pathlib import Path

import pytest

from notify import load_config, should_notify


def cfg(start=None, end=None, **extra):
    config = {"channel": "email", **extra}
    if start is not None:
        config["quiet_hours"] = {"start": start, "end": end}
    return config


def test_config_json_has_quiet_hours_and_keeps_the_rest():
    config = json.loads(Path("config.json").read_text())
    assert config.get("quiet_hours") == {"start": 22, "end": 7}, f"quiet_hours is {config.get('quiet_hours')!r}"
    assert config.get("channel") == "email"
    assert config.get("recipients") == ["ops@example.com"]
    assert config.get("enabled") is True


@pytest.mark.parametrize("hour, expected", [(8, True), (9, False), (12, False), (16, False), (17, True), (23, True)])
def test_daytime_quiet_hours(hour, expected):
    assert bool(should_notify(hour, cfg(9, 17))) is expected


@pytest.mark.parametrize("hour, expected", [(21, True), (22, False), (23, False), (0, False), (3, False),
                                            (6, False), (7, True), (12, True)])
def test_quiet_hours_wrapping_past_midnight(hour, expected):
    assert bool(should_notify(hour, cfg(22, 7))) is expected


def test_start_equal_to_end_means_no_quiet_hours():
    assert all(should_notify(hour, cfg(5, 5)) for hour in range(24))


def test_no_quiet_hours_setting():
    assert all(should_notify(hour, cfg()) for hour in range(24))


def test_enabled_false_still_turns_everything_off():
    assert not any(should_notify(hour, cfg(22, 7, enabled=False)) for hour in range(24))
    assert not any(should_notify(hour, cfg(enabled=False)) for hour in range(24))


def test_with_the_real_config_file():
    config = load_config()
    assert not should_notify(23, config)
    assert not should_notify(2, config)
    assert should_notify(7, config)
    assert should_notify(15, config)
