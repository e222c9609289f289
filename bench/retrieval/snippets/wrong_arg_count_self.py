"""A method that forgot its self parameter."""


class Calculator:
    def add(a, b):
        return a + b


print(Calculator().add(2, 3))
