"""A small shop: carts, prices and the bulk discount."""
