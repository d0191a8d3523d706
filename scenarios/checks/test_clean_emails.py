"""Acceptance check for clean_emails.yaml: emails.txt holds the six valid addresses, lowercased and sorted."""

from pathlib import Path

EXPECTED = [
    "alice.martin@example.com",
    "bob@example.org",
    "carol_diaz@mail.example.net",
    "grace+news@example.com",
    "ivan@example.co.uk",
    "mallory@example.com",
]


def test_emails_txt():
    lines = [line.strip() for line in Path("emails.txt").read_text().splitlines() if line.strip()]
    assert lines == EXPECTED, f"emails.txt has {lines}, expected {EXPECTED}"
