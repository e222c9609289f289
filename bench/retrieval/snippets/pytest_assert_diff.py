"""Run with pytest: the serializer output differs from the expected dict."""


def serialize(user: dict) -> dict:
    return {"id": user["id"], "name": user["name"].title(), "roles": sorted(user["roles"]), "active": True}


def test_serialize_user():
    user = {"id": 7, "name": "ada lovelace", "roles": ["dev", "admin"]}
    assert serialize(user) == {"id": 7, "name": "Ada Lovelace", "roles": ["admin", "dev"], "active": False}
