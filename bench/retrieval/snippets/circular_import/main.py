from shop.models import Customer

print(Customer("ada").orders())
