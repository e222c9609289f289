"""A function indented with spaces, one line with a tab."""


def greet(name):
    if name:
        message = f"hello {name}"
	return message
    return "hello"


print(greet("ada"))
