"""Money in integer cents and a small ledger."""

from ledger.accounts import Account, InsufficientFunds
from ledger.money import Money, allocate
from ledger.report import monthly_totals, running_balance

__all__ = ["Account", "InsufficientFunds", "Money", "allocate", "monthly_totals", "running_balance"]
