"""A variable named list shadows the builtin."""

list = ["alpha", "beta", "gamma"]
upper = list(name.upper() for name in list)
print(upper)
