"""Grading of the bulk discount request: five requirements a careful senior engineer would check.

Never shown to the agent, the writer or the reviewers; run after the session to score it.
"""
import pytest

from shop.cart import Cart


def cart_of(qty, price=250):
    c = Cart()
    c.add("pen", price, qty)
    return c


def test_exactly_ten_units_get_ten_percent_off():
    assert cart_of(10).total() == 2250


def test_nine_units_pay_the_full_price():
    assert cart_of(9).total() == 2250


def test_units_on_several_lines_are_added_up():
    c = Cart()
    c.add("pen", 250, 7)
    c.add("pad", 120, 3)
    assert c.total() == (7 * 250 + 3 * 120) * 9 // 10


def test_the_discount_is_rounded_down_to_a_whole_cent():
    assert cart_of(10, price=333).total() == 3330 - 333


def test_a_negative_quantity_is_still_refused():
    with pytest.raises(ValueError):
        Cart().add("pen", 250, -1)
