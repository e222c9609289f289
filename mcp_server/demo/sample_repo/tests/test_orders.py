import pytest
from inventory.orders import bulk_lines, order_lines, order_total

CATALOG = {"A-1": 2.5, "B-2": 10.0}
ORDER = "SKU,Qty\nA-1,4\nB-2,10\n"


def test_order_lines_are_read_in_order():
    assert order_lines(ORDER) == [("A-1", 4), ("B-2", 10)]


def test_a_zero_quantity_is_refused():
    with pytest.raises(ValueError, match="positive"):
        order_lines("sku,qty\nA-1,0\n")


def test_order_total_multiplies_quantity_by_price():
    assert order_total(ORDER, CATALOG) == 110.0


def test_a_discount_reduces_the_total():
    assert order_total(ORDER, CATALOG, discount=0.1) == 99.0


def test_a_full_discount_is_refused():
    with pytest.raises(ValueError, match="discount"):
        order_total(ORDER, CATALOG, discount=1)


def test_bulk_lines_reach_the_threshold():
    assert bulk_lines(ORDER) == ["B-2"]
    assert bulk_lines(ORDER, threshold=4) == ["A-1", "B-2"]
