"""Amounts of money as integer cents with a currency; never floats."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Money:
    cents: int
    currency: str = "EUR"

    @classmethod
    def parse(cls, text, currency="EUR"):
        """'12.34' -> 1234 cents; at most two decimals."""
        text = text.strip()
        negative = text.startswith("-")
        if negative:
            text = text[1:]
        whole, _, frac = text.partition(".")
        if len(frac) > 2 or not whole.isdigit() or (frac and not frac.isdigit()):
            raise ValueError(f"not an amount: {text!r}")
        cents = int(whole) * 100 + int(frac.ljust(2, "0") or 0)
        return cls(-cents if negative else cents, currency)

    def _check(self, other):
        if not isinstance(other, Money):
            raise TypeError("can only combine Money with Money")
        if other.currency != self.currency:
            raise ValueError(f"currency mismatch: {self.currency} and {other.currency}")

    def __add__(self, other):
        self._check(other)
        return Money(self.cents + other.cents, self.currency)

    def __sub__(self, other):
        self._check(other)
        return Money(self.cents - other.cents, self.currency)

    def __lt__(self, other):
        self._check(other)
        return self.cents < other.cents

    def times(self, factor):
        """Multiplied by `factor`, rounded half away from zero to whole cents."""
        value = self.cents * factor
        rounded = int(abs(value) + 0.5)
        return Money(rounded if value >= 0 else -rounded, self.currency)

    def __str__(self):
        sign = "-" if self.cents < 0 else ""
        whole, cents = divmod(abs(self.cents), 100)
        return f"{sign}{whole}.{cents:02d} {self.currency}"


def allocate(amount, ratios):
    """Split `amount` by `ratios` so the parts add up exactly; leftover cents go to the first parts."""
    if not ratios or any(r < 0 for r in ratios):
        raise ValueError("ratios must be non-negative and not empty")
    total = sum(ratios)
    if total == 0:
        raise ValueError("ratios must not all be zero")
    parts = [amount.cents * r // total for r in ratios]
    remainder = amount.cents - sum(parts)
    for i in range(remainder):
        parts[i % len(parts)] += 1
    return [Money(p, amount.currency) for p in parts]
