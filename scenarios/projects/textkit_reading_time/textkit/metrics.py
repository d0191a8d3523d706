"""Measurements of a post's text."""
import re

WORD = re.compile(r"[A-Za-z0-9']+")


def word_count(text):
    """Number of words in text: runs of letters, digits and apostrophes ("don't" is one word)."""
    return len(WORD.findall(text))
