"""Look up a user record; the helper has no return on the 'found' path."""

USERS = [{"id": 1, "name": "ada"}, {"id": 2, "name": "grace"}]


def find_user(user_id: int) -> dict | None:
    for user in USERS:
        if user["id"] == user_id:
            print(f"found user {user_id}")
            break


user = find_user(2)
print(user["name"])
