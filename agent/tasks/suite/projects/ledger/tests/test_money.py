import pytest

from ledger import Money, allocate


def test_parse_whole_and_fraction():
    assert Money.parse("12.34").cents == 1234
    assert Money.parse("7").cents == 700
    assert Money.parse("0.5").cents == 50


def test_parse_negative():
    assert Money.parse("-3.10").cents == -310


def test_parse_rejects_three_decimals():
    with pytest.raises(ValueError):
        Money.parse("1.234")


def test_add_and_subtract():
    assert Money(150) + Money(275) == Money(425)
    assert Money(150) - Money(275) == Money(-125)


def test_mixing_currencies_is_an_error():
    with pytest.raises(ValueError, match="currency mismatch"):
        Money(1, "EUR") + Money(1, "USD")


def test_adding_a_number_is_a_type_error():
    with pytest.raises(TypeError):
        Money(1) + 5


def test_ordering():
    assert Money(1) < Money(2)
    assert not Money(2) < Money(2)


def test_times_rounds_half_away_from_zero():
    assert Money(5).times(0.5) == Money(3)
    assert Money(-5).times(0.5) == Money(-3)
    assert Money(1000).times(1.07) == Money(1070)


def test_str():
    assert str(Money(123456)) == "1234.56 EUR"
    assert str(Money(-5, "USD")) == "-0.05 USD"


def test_allocate_splits_exactly():
    parts = allocate(Money(100), [1, 1, 1])
    assert [p.cents for p in parts] == [34, 33, 33]


def test_allocate_by_weights():
    assert [p.cents for p in allocate(Money(1000), [3, 1])] == [750, 250]


def test_allocate_rejects_bad_ratios():
    with pytest.raises(ValueError):
        allocate(Money(10), [])
    with pytest.raises(ValueError):
        allocate(Money(10), [0, 0])
