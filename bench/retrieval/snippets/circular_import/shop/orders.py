from shop.models import Customer


class Order:
    def __init__(self, customer: Customer, number: int) -> None:
        self.customer = customer
        self.number = number
