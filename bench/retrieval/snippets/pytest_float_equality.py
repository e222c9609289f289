"""Run with pytest: exact equality on a float sum."""


def cart_total(prices: list[float]) -> float:
    return sum(prices)


def test_cart_total():
    assert cart_total([0.1, 0.2]) == 0.3
