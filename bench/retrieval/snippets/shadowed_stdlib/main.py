import json


def load_settings(text: str) -> dict:
    return json.loads(text)


print(load_settings('{"debug": true}'))
