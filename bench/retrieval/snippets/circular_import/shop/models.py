from shop.orders import Order


class Customer:
    def __init__(self, name: str) -> None:
        self.name = name

    def orders(self) -> list[Order]:
        return [Order(self, 1)]
