"""Read a CSV exported by a Windows spreadsheet (cp1252) as UTF-8."""

from pathlib import Path

Path("customers.csv").write_bytes("name;city\nRené;Genève\n".encode("cp1252"))

with open("customers.csv", encoding="utf-8") as f:
    rows = [line.rstrip("\n").split(";") for line in f]
print(rows)
