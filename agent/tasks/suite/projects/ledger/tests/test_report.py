from ledger import Money, monthly_totals, running_balance

ENTRIES = [
    ("2024-01-03", Money(1000)),
    ("2024-01-20", Money(-250)),
    ("2024-02-01", Money(400)),
    ("2023-12-31", Money(-100)),
]


def test_running_balance():
    assert running_balance(ENTRIES) == [1000, 750, 1150, 1050]


def test_running_balance_with_opening():
    assert running_balance(ENTRIES[:1], opening=50) == [1050]


def test_monthly_totals_sorted_by_month():
    assert monthly_totals(ENTRIES) == {"2023-12": -100, "2024-01": 750, "2024-02": 400}
    assert list(monthly_totals(ENTRIES)) == ["2023-12", "2024-01", "2024-02"]
