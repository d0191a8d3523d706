from textkit.metrics import word_count


def test_word_count_simple():
    assert word_count("Hello brave new world") == 4


def test_word_count_ignores_punctuation():
    assert word_count("Wait -- what?! No...") == 3


def test_word_count_keeps_apostrophes():
    assert word_count("don't stop") == 2
