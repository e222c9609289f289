"""Order totals from CSV text."""

import csv
import io


def order_total(text, catalog):
    """Sum quantity x price over the order lines of CSV text with a header row."""
    total = 0.0
    for row in csv.DictReader(io.StringIO(text)):
        total += int(row["qty"]) * catalog[row["sku"]]
    return round(total, 2)
