"""Acceptance check for fix_median.yaml: the given tests (copied here, so editing them does not help) plus the
behaviours the task states in words."""

import pytest

from stats import mean, median


# the workspace's test_stats.py, verbatim
def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_of_empty_list_raises():
    with pytest.raises(ValueError):
        mean([])


def test_median_odd_count():
    assert median([3, 1, 2]) == 2


def test_median_even_count():
    assert median([4, 1, 3, 2]) == 2.5


# stated in the task
def test_single_value():
    assert median([7]) == 7


def test_unsorted_odd_and_even_counts():
    assert median([9, -3, 5, 1, 0]) == 1
    assert median([0.5, 10.0, -1.0, 2.0]) == 1.25


def test_input_list_is_not_changed():
    values = [5, 3, 9, 1]
    median(values)
    assert values == [5, 3, 9, 1], f"median() changed its argument to {values}"


def test_empty_list_raises_value_error():
    with pytest.raises(ValueError):
        median([])
