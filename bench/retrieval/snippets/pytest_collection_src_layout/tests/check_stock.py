from inventory.stock import reserve


def test_reserve_reduces_stock():
    assert reserve({"apple": 3}, "apple", 2) == {"apple": 1}
