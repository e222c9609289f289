from inventory.orders import order_total

CATALOG = {"A-1": 2.5, "B-2": 10.0}
ORDER = "SKU,Qty\nA-1,4\nB-2,1\n"


def test_order_total_multiplies_quantity_by_price():
    assert order_total(ORDER, CATALOG) == 20.0
