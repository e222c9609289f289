"""Compare an age read from text with an int."""

form = {"name": "ada", "age": "17"}

if form["age"] < 18:
    print("minor")
