from core.db import connect

print(connect())
