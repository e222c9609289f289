import billing.taxes

DEFAULT_CURRENCY = "EUR"


def render_invoice(amount: float) -> str:
    return f"{amount + billing.taxes.vat(amount):.2f} {DEFAULT_CURRENCY}"
