"""Reports over dated entries: (date 'YYYY-MM-DD', Money)."""


def running_balance(entries, opening=0):
    """The balance in cents after each entry, in order."""
    balance = opening
    out = []
    for _, amount in entries:
        balance += amount.cents
        out.append(balance)
    return out


def monthly_totals(entries):
    """{'YYYY-MM': total cents}, months in ascending order."""
    totals = {}
    for date, amount in entries:
        month = date[:7]
        totals[month] = totals.get(month, 0) + amount.cents
    return dict(sorted(totals.items()))
