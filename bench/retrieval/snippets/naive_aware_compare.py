"""Check whether a token from an API (aware timestamp) has expired using naive now()."""

from datetime import datetime

token = {"value": "abc", "expires_at": "2024-05-01T10:00:00+00:00"}
expires_at = datetime.fromisoformat(token["expires_at"])
if datetime.now() > expires_at:
    print("token expired")
