"""Load settings from a path relative to the current working directory."""

import json


def load_settings() -> dict:
    with open("config/settings.json", encoding="utf-8") as f:
        return json.load(f)


print(load_settings()["debug"])
