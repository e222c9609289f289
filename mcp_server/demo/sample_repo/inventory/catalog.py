"""Load the product catalog from CSV text (a spreadsheet export)."""

import csv
import io


def load_catalog(text):
    """Map each SKU to its price, from CSV text with a header row; headers in any case, blank rows skipped."""
    catalog = {}
    for row in csv.DictReader(io.StringIO(text)):
        row = {key.strip().lower(): (value or "").strip() for key, value in row.items()}
        if not row.get("sku"):
            continue
        price = float(row["price"])
        if price < 0:
            raise ValueError(f"negative price for {row['sku']}")
        catalog[row["sku"]] = price
    return catalog


def price_of(catalog, sku):
    """The price of `sku`; an unknown SKU is a LookupError naming it."""
    if sku not in catalog:
        raise LookupError(f"unknown SKU {sku}")
    return catalog[sku]


def cheapest(catalog, count=1):
    """The `count` cheapest SKUs, cheapest first (ties by SKU)."""
    return sorted(catalog, key=lambda sku: (catalog[sku], sku))[:count]
