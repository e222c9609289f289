import pytest
from inventory.catalog import cheapest, load_catalog, price_of

EXPORT = "SKU,Price\nA-1,2.50\nB-2,10.00\n,\nC-3,1.25\n"


def test_prices_are_read_from_the_spreadsheet_export():
    assert price_of(load_catalog(EXPORT), "B-2") == 10.0


def test_every_sku_is_loaded_and_blank_rows_are_skipped():
    assert sorted(load_catalog(EXPORT)) == ["A-1", "B-2", "C-3"]


def test_a_negative_price_is_refused():
    with pytest.raises(ValueError, match="negative price"):
        load_catalog("sku,price\nA-1,-1\n")


def test_an_unknown_sku_is_a_lookup_error():
    with pytest.raises(LookupError, match="Z-9"):
        price_of(load_catalog(EXPORT), "Z-9")


def test_the_cheapest_skus_come_first():
    assert cheapest(load_catalog(EXPORT), 2) == ["C-3", "A-1"]
    assert cheapest(load_catalog(EXPORT)) == ["C-3"]
