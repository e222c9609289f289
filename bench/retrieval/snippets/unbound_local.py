"""Count requests in a module-level counter from inside a function."""

request_count = 0


def handle_request(path: str) -> str:
    request_count += 1
    return f"{path} #{request_count}"


print(handle_request("/health"))
