from shopkit.cart import Line, subtotal
from shopkit.money import format_cents


def test_subtotal():
    lines = [Line("A1", 250, 2), Line("B7", 1999, 1)]
    assert subtotal(lines) == 2499


def test_empty_cart():
    assert subtotal([]) == 0


def test_format_cents():
    assert format_cents(2499) == "24.99"
    assert format_cents(5) == "0.05"
