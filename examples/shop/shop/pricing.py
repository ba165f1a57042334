"""Prices are integer cents; discounts round down to whole cents."""

BULK_THRESHOLD = 10  # units in one order from which the bulk discount applies
BULK_PERCENT = 10


def line_total(price_cents: int, qty: int) -> int:
    if qty <= 0:
        raise ValueError(f"quantity must be positive, got {qty}")
    return price_cents * qty


def bulk_discount(subtotal_cents: int, units: int) -> int:
    """Orders of BULK_THRESHOLD units or more get BULK_PERCENT off."""
    if units > BULK_THRESHOLD:
        return subtotal_cents * BULK_PERCENT // 100
    return 0
