from ..config import settings


def connect() -> str:
    return f"connected to {settings['database_url']}"
