"""Showing amounts of money."""


def format_cents(cents):
    """1999 -> "19.99"."""
    return f"{cents // 100}.{cents % 100:02d}"
