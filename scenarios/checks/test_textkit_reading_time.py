"""Acceptance check for textkit_reading_time.yaml: reading_time and reading_label in textkit/metrics.py behave as
the task states, and word_count still does."""

import pytest

from textkit.metrics import reading_label, reading_time, word_count


def words(n):
    return " ".join(["word"] * n)


def test_word_count_unchanged():
    assert word_count("Hello brave new world") == 4
    assert word_count("Wait -- what?! No...") == 3
    assert word_count("don't stop") == 2


def test_whole_minutes_rounded_up():
    assert reading_time(words(200)) == 1
    assert reading_time(words(201)) == 2
    assert reading_time(words(400)) == 2
    assert reading_time(words(1000)) == 5


def test_at_least_one_minute_for_any_word():
    assert reading_time("Hi") == 1
    assert reading_time(words(3)) == 1


def test_words_are_counted_like_word_count():
    text = "don't -- stop! " * 150  # 300 words by word_count, 450 when split on spaces
    assert reading_time(text) == 2


def test_custom_words_per_minute():
    assert reading_time(words(250), words_per_minute=100) == 3
    assert reading_time(words(250), 500) == 1


def test_text_without_words_takes_zero_minutes():
    assert reading_time("") == 0
    assert reading_time("   ... !! -- ") == 0


@pytest.mark.parametrize("wpm", [0, -5])
def test_words_per_minute_must_be_positive(wpm):
    with pytest.raises(ValueError):
        reading_time(words(10), words_per_minute=wpm)


def test_reading_label():
    assert reading_label(1) == "1 min read"
    assert reading_label(4) == "4 min read"
    assert reading_label(0) == "less than 1 min read"
