"""A small shop whose bug is two calls below what its failing test calls, with no frame naming it.

`Cart.total` (what the test calls) -> `line_total` -> `bulk_discount` (the bug: it returns the
discounted price, not the discount). The failing test stops at its own assert, so no traceback
frame is in shop/; only the bulk order runs `bulk_discount`. Its file-mates pass and run
`Cart.total`, `Cart.add` and `line_total`, never `bulk_discount`.
"""

from __future__ import annotations

FAILING = "tests/test_cart.py::test_bulk_orders_get_ten_percent_off"
BUGGY = "bulk_discount"

CART = r'''"""A shopping cart: items, totals and the receipt text."""

BULK_QUANTITY = 10


class Cart:
    def __init__(self):
        self.items = []

    def add(self, name, price, quantity=1):
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        self.items.append((name, price, quantity))

    def total(self):
        return round(sum(line_total(price, quantity) for _, price, quantity in self.items), 2)

    def receipt(self):
        lines = [f"{name} x{quantity}: {line_total(price, quantity):.2f}" for name, price, quantity in self.items]
        lines.append(f"total: {self.total():.2f}")
        return "\n".join(lines)


def line_total(price, quantity):
    gross = price * quantity
    if quantity >= BULK_QUANTITY:
        gross -= bulk_discount(gross, quantity)
    return round(gross, 2)


def bulk_discount(gross, quantity):
    rate = 0.15 if quantity >= 100 else 0.10
    return gross - gross * rate  # the bug: this is the discounted price, not the discount
'''

TESTS = r'''import pytest

from shop.cart import Cart


def test_empty_cart_costs_nothing():
    assert Cart().total() == 0


def test_total_adds_the_lines():
    cart = Cart()
    cart.add("pen", 1.5, 2)
    cart.add("pad", 3.0)
    assert cart.total() == 6.0


def test_receipt_lists_every_line():
    cart = Cart()
    cart.add("pen", 1.5, 2)
    assert cart.receipt() == "pen x2: 3.00\ntotal: 3.00"


def test_rejects_zero_quantity():
    with pytest.raises(ValueError):
        Cart().add("pen", 1.5, 0)


def test_bulk_orders_get_ten_percent_off():
    cart = Cart()
    cart.add("pen", 1.0, 20)
    assert cart.total() == 18.0
'''

HANGS = """

def test_hangs():
    while True:
        pass


def test_floods():
    while True:
        print("flood " * 40)
"""


def files(*, hung: bool = False) -> dict[str, bytes]:
    """The shop's files; `hung` adds a test that hangs and one that floods its output (both time out)."""
    return {
        "shop/__init__.py": b"",
        "shop/cart.py": CART.encode(),
        "tests/__init__.py": b"",
        "tests/test_cart.py": (TESTS + (HANGS if hung else "")).encode(),
    }
