VAT_RATE = 0.2


def calculate_vat(amount: float) -> float:
    return round(amount * VAT_RATE, 2)
