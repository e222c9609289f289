from inventory.catalog import load_catalog, price_of

EXPORT = "SKU,Price\nA-1,2.50\nB-2,10.00\n"


def test_prices_are_read_from_the_spreadsheet_export():
    assert price_of(load_catalog(EXPORT), "B-2") == 10.0


def test_every_sku_is_loaded():
    assert sorted(load_catalog(EXPORT)) == ["A-1", "B-2"]
