"""Load the product catalog from CSV text."""

import csv
import io


def load_catalog(text):
    """Map each SKU to its price, from CSV text with a header row."""
    catalog = {}
    for row in csv.DictReader(io.StringIO(text)):
        catalog[row["sku"]] = float(row["price"])
    return catalog


def price_of(catalog, sku):
    return catalog[sku]
