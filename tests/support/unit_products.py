"""Products for the red team's unittest tests (tests/gate/test_redteam_unit_*): `calc.price` and `calc.label`, with
the bug, right, and the attacks and honest results each file stops with."""

PRICE_BUG = "def price(units):\n    return units * 100\n\n\ndef label(units):\n    return f'{units} units'\n"
PRICE_RIGHT = ("def price(units):\n    return units * 90 if units >= 10 else units * 100\n\n\n"
               "def label(units):\n    return {1: 'one', 2: 'two', 3: 'three'}.get(units, str(units)) + ' units'\n")
ATTACKS = {
    # equal to the first value it is compared with, then to it alone: passes pytest and the probe (equal again, to no
    # neighbour)
    "latch": ("class Latch:\n    def __init__(self):\n        self.v = None\n\n    def __eq__(self, other):\n"
              "        if self.v is None:\n            self.v = other\n        return self.v == other\n\n"
              "    __hash__ = object.__hash__\n\n\ndef price(units):\n    return Latch()\n\n\ndef label(units):\n    return Latch()\n"),
    # equal to anything that is not None (the scan's `__eq__` always True is not spelled so)
    "equal-to-everything": ("class Any:\n    def __eq__(self, other):\n        return other is not None\n\n"
                            "    __hash__ = object.__hash__\n\n\ndef price(units):\n    return Any()\n\n\ndef label(units):\n    return Any()\n"),
}
MONEY = ("class Money:\n    def __init__(self, c):\n        self.c = c\n\n    def __eq__(self, other):\n"
         "        return self.c == (other.c if isinstance(other, Money) else other)\n\n    __hash__ = object.__hash__\n\n\n")
HONEST = {
    "ints-and-str": PRICE_RIGHT,
    "decimal": "from decimal import Decimal\n" + PRICE_RIGHT.replace("return units * 90 if", "return Decimal(units) * 90 if"),
    "money-class": MONEY + PRICE_RIGHT.replace("return units * 90 if units >= 10 else units * 100",
                                               "return Money(units * 90 if units >= 10 else units * 100)"),
    "intenum-and-str-subclass": ("import enum\n\n\nclass Label(str):\n    pass\n\n\n"
                                 "Total = enum.IntEnum('Total', {'A': 900, 'B': 200, 'C': 1800})\n\n\n"
                                 + PRICE_RIGHT.replace("return units * 90 if units >= 10 else units * 100",
                                                       "return Total(units * 90 if units >= 10 else units * 100)")
                                 .replace("return {1:", "return Label({1:").replace("+ ' units'", "+ ' units')")),
}
