"""Handle a webhook payload; this event type has no 'user_id' field."""

import json

RAW = '{"event": "invoice.paid", "data": {"customer": "cus_42", "amount": 1200}}'


def handle(raw: str) -> str:
    payload = json.loads(raw)
    return f"{payload['event']} for {payload['user_id']}"


print(handle(RAW))
