"""Evict expired cache entries while iterating over the cache."""

cache = {"a": (1, 100.0), "b": (2, 5.0), "c": (3, 250.0)}
now = 50.0

for key, (_value, expires) in cache.items():
    if expires < now:
        del cache[key]
print(cache)
