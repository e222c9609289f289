"""An account with a history of transactions and an overdraft limit."""

from ledger.money import Money


class InsufficientFunds(Exception):
    pass


class Account:
    def __init__(self, name, currency="EUR", overdraft=0):
        self.name = name
        self.currency = currency
        self.overdraft = overdraft
        self.history = []

    @property
    def balance(self):
        total = Money(0, self.currency)
        for _, amount in self.history:
            total = total + amount
        return total

    def deposit(self, amount, memo="deposit"):
        if amount.cents <= 0:
            raise ValueError("deposits must be positive")
        self.history.append((memo, amount))
        return self.balance

    def withdraw(self, amount, memo="withdrawal"):
        if amount.cents <= 0:
            raise ValueError("withdrawals must be positive")
        if self.balance.cents - amount.cents < -self.overdraft:
            raise InsufficientFunds(f"{self.name} cannot pay {amount}")
        self.history.append((memo, Money(-amount.cents, amount.currency)))
        return self.balance

    def transfer(self, other, amount):
        """Move `amount` to `other`; nothing changes when the withdrawal is refused."""
        self.withdraw(amount, memo=f"to {other.name}")
        other.deposit(amount, memo=f"from {self.name}")
