"""Load a cache file that was created empty."""

import json
from pathlib import Path

cache_file = Path("cache.json")
cache_file.touch()

with cache_file.open(encoding="utf-8") as f:
    cache = json.load(f)
print(len(cache))
