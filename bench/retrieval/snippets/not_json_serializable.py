"""Serialise an audit event that carries a datetime."""

import json
from datetime import datetime, timezone

event = {"action": "login", "user": "ada", "at": datetime(2024, 5, 1, 9, 30, tzinfo=timezone.utc)}
print(json.dumps(event))
