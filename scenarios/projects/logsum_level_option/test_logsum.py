from logsum import count_levels


def test_count_levels():
    lines = [
        "2024-05-01 10:00:01 INFO started",
        "2024-05-01 10:00:02 ERROR boom",
        "2024-05-01 10:00:03 INFO done",
    ]
    assert count_levels(lines) == {"INFO": 2, "ERROR": 1}


def test_short_lines_are_skipped():
    assert count_levels(["", "garbage"]) == {}
