"""Scratch notes: sample payloads for the settings loader."""

SAMPLE = '{"debug": true, "workers": 4}'
EMPTY = "{}"
