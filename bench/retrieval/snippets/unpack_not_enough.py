"""Split host:port strings; one entry has no port."""

SERVERS = ["db.internal:5432", "cache.internal:6379", "search.internal"]

for entry in SERVERS:
    host, port = entry.split(":")
    print(host, int(port))
