"""Nested double quotes inside an f-string (valid only on Python 3.12+)."""

user = {"name": "ada", "role": "admin"}
print(f"{user["name"]} is an {user["role"]}")
