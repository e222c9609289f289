"""Order totals from CSV text."""

import csv
import io

from inventory.catalog import price_of


def order_lines(text):
    """(sku, quantity) pairs of CSV text with a header row; quantities must be positive."""
    lines = []
    for row in csv.DictReader(io.StringIO(text)):
        row = {key.strip().lower(): value.strip() for key, value in row.items()}
        qty = int(row["qty"])
        if qty <= 0:
            raise ValueError(f"quantity must be positive, got {qty}")
        lines.append((row["sku"], qty))
    return lines


def order_total(text, catalog, discount=0.0):
    """Sum quantity x price over the order lines, less a fractional `discount` in [0, 1)."""
    if not 0 <= discount < 1:
        raise ValueError("discount must be in [0, 1)")
    total = sum(qty * price_of(catalog, sku) for sku, qty in order_lines(text))
    return round(total * (1 - discount), 2)


def bulk_lines(text, threshold=10):
    """The SKUs ordered in at least `threshold` units."""
    return [sku for sku, qty in order_lines(text) if qty >= threshold]
