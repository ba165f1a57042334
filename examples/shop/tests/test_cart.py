from shop.cart import Cart


def test_small_cart_has_no_discount():
    cart = Cart()
    cart.add("pen", 250, 2)
    assert cart.total() == 500
