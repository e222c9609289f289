def reserve(stock: dict[str, int], sku: str, qty: int) -> dict[str, int]:
    if stock.get(sku, 0) < qty:
        raise ValueError(f"not enough {sku}")
    return {**stock, sku: stock[sku] - qty}
