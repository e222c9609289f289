import pytest

from ledger import Account, InsufficientFunds, Money


def test_deposit_increases_balance():
    account = Account("alice")
    assert account.deposit(Money(500)) == Money(500)


def test_deposit_must_be_positive():
    with pytest.raises(ValueError):
        Account("alice").deposit(Money(0))


def test_withdraw_within_balance():
    account = Account("alice")
    account.deposit(Money(500))
    assert account.withdraw(Money(200)) == Money(300)


def test_withdraw_beyond_balance_is_refused():
    account = Account("alice")
    account.deposit(Money(100))
    with pytest.raises(InsufficientFunds):
        account.withdraw(Money(101))
    assert account.balance == Money(100)


def test_overdraft_allows_a_negative_balance():
    account = Account("bob", overdraft=50)
    assert account.withdraw(Money(50)) == Money(-50)
    with pytest.raises(InsufficientFunds):
        account.withdraw(Money(1))


def test_transfer_moves_money_and_records_memos():
    alice, bob = Account("alice"), Account("bob")
    alice.deposit(Money(300))
    alice.transfer(bob, Money(120))
    assert alice.balance == Money(180)
    assert bob.balance == Money(120)
    assert bob.history[-1][0] == "from alice"


def test_refused_transfer_changes_nothing():
    alice, bob = Account("alice"), Account("bob")
    with pytest.raises(InsufficientFunds):
        alice.transfer(bob, Money(1))
    assert bob.history == []
