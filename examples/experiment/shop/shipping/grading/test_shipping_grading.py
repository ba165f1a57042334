"""Grading of the shipping request: five requirements a careful senior engineer would check.

Never shown to the agent, the writer or the reviewers; run after the session to score it.
"""
from shop.cart import Cart


def cart_with(price, qty=1):
    c = Cart()
    c.add("item", price, qty)
    return c


def test_an_order_under_fifty_dollars_pays_499_for_shipping():
    c = cart_with(1000)
    assert (c.shipping(), c.total()) == (499, 1499)


def test_an_order_of_exactly_fifty_dollars_ships_free():
    assert cart_with(5000).total() == 5000


def test_an_order_over_fifty_dollars_ships_free():
    assert cart_with(4000, 2).shipping() == 0


def test_an_empty_cart_costs_nothing_not_even_shipping():
    assert (Cart().shipping(), Cart().total()) == (0, 0)


def test_the_bulk_discount_still_applies_with_free_shipping():
    assert cart_with(1000, 11).total() == 9900
