"""Iterate over (name, email, role) rows as if they were pairs."""

ROWS = [("ada", "ada@example.com", "admin"), ("grace", "grace@example.com", "dev")]

for name, email in ROWS:
    print(name, email)
