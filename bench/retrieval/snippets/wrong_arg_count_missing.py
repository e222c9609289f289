"""A call site not updated after a parameter was added."""


def send_email(recipient: str, subject: str, body: str) -> str:
    return f"To: {recipient}\nSubject: {subject}\n\n{body}"


print(send_email("ops@example.com", "Disk almost full on db-1"))
