"""Grading of the coupon request: five requirements a careful senior engineer would check.

Never shown to the agent, the writer or the reviewers; run after the session to score it.
"""
import pytest

from shop.cart import Cart


def one_line_cart(price, qty=1):
    c = Cart()
    c.add("item", price, qty)
    return c


def test_save10_code_removes_a_tenth_of_the_total():
    c = one_line_cart(1000, 2)
    c.apply_coupon("SAVE10")
    assert c.total() == 1800


def test_fiveoff_code_removes_five_hundred_cents():
    c = one_line_cart(2000)
    c.apply_coupon("FIVEOFF")
    assert c.total() == 1500


def test_an_unknown_code_is_a_value_error():
    with pytest.raises(ValueError):
        one_line_cart(1000).apply_coupon("NOPE")


def test_fiveoff_never_takes_the_total_below_zero():
    c = one_line_cart(300)
    c.apply_coupon("FIVEOFF")
    assert c.total() == 0


def test_a_percentage_coupon_comes_after_the_bulk_discount():
    c = one_line_cart(1000, 11)  # 11000, bulk 10% -> 9900, then SAVE10 -> 8910
    c.apply_coupon("SAVE10")
    assert c.total() == 8910
