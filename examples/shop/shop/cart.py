from shop.pricing import bulk_discount, line_total


class Cart:
    def __init__(self) -> None:
        self.lines: list[tuple[str, int, int]] = []

    def add(self, sku: str, price_cents: int, qty: int = 1) -> None:
        line_total(price_cents, qty)  # validates the quantity
        self.lines.append((sku, price_cents, qty))

    def units(self) -> int:
        return sum(qty for _, _, qty in self.lines)

    def subtotal(self) -> int:
        return sum(line_total(price, qty) for _, price, qty in self.lines)

    def total(self) -> int:
        subtotal = self.subtotal()
        return subtotal - bulk_discount(subtotal, self.units())
