"""Acceptance check for shopkit_coupons.yaml: shopkit.coupons.apply_coupon follows the rules the task states."""

import pytest

from shopkit.coupons import apply_coupon


def test_save10_discount_rounded_down():
    assert apply_coupon(1000, "SAVE10") == 900
    assert apply_coupon(999, "SAVE10") == 900
    assert apply_coupon(5, "SAVE10") == 5
    assert apply_coupon(12345, "SAVE10") == 11111


def test_fiveoff_never_below_zero():
    assert apply_coupon(1200, "FIVEOFF") == 700
    assert apply_coupon(500, "FIVEOFF") == 0
    assert apply_coupon(300, "FIVEOFF") == 0


def test_codes_case_insensitive_and_trimmed():
    assert apply_coupon(1000, " save10 ") == 900
    assert apply_coupon(1200, "FiveOff") == 700


def test_no_coupon_keeps_the_subtotal():
    assert apply_coupon(1234, None) == 1234
    assert apply_coupon(1234, "") == 1234
    assert apply_coupon(0, None) == 0


def test_results_are_whole_cents():
    assert isinstance(apply_coupon(999, "SAVE10"), int)


def test_unknown_code_raises():
    with pytest.raises(ValueError):
        apply_coupon(1000, "FREESTUFF")


def test_negative_subtotal_raises():
    with pytest.raises(ValueError):
        apply_coupon(-100, "SAVE10")
    with pytest.raises(ValueError):
        apply_coupon(-100, None)


def test_existing_modules_still_work():
    from shopkit.cart import Line, subtotal
    from shopkit.money import format_cents
    assert subtotal([Line("A1", 250, 2), Line("B7", 1999, 1)]) == 2499
    assert format_cents(2499) == "24.99"
