"""Acceptance check for fix_parse_duration.yaml: the given tests (copied here) plus the cases the task states."""

import pytest

from durations import parse_duration


# the workspace's test_durations.py, verbatim
def test_single_units():
    assert parse_duration("2h") == 7200
    assert parse_duration("45s") == 45


def test_hours_and_minutes():
    assert parse_duration("1h30m") == 5400


def test_all_three_units():
    assert parse_duration("1h2m3s") == 3723


def test_empty_string_is_an_error():
    with pytest.raises(ValueError):
        parse_duration("")


# stated in the task
def test_minutes_only_and_zero():
    assert parse_duration("90m") == 5400
    assert parse_duration("0s") == 0


def test_upper_case_units():
    assert parse_duration("2H") == 7200
    assert parse_duration("1H30M") == 5400


def test_spaces_between_and_around_parts():
    assert parse_duration("1h 30m") == 5400
    assert parse_duration(" 1h 2m 3s ") == 3723


@pytest.mark.parametrize("text", ["abc", "10", "5x", "1h30", "h"])
def test_junk_is_an_error(text):
    with pytest.raises(ValueError):
        parse_duration(text)
