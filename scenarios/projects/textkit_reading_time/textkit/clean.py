"""Cleaning raw post bodies before they are measured or displayed."""
import re

TAG = re.compile(r"<[^>]+>")


def strip_tags(html):
    """Text of an HTML fragment with the tags removed."""
    return TAG.sub("", html)


def normalize_whitespace(text):
    """Runs of spaces, tabs and newlines collapsed to one space, no space at either end."""
    return " ".join(text.split())
