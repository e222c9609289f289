"""Passing timeout= to a helper whose parameter is called timeout_s."""


def connect(host: str, port: int = 5432, timeout_s: float = 10.0) -> str:
    return f"{host}:{port} (timeout {timeout_s}s)"


print(connect("db.internal", timeout=3))
