"""A small data-access helper whose database driver is missing from the venv."""

from contextlib import closing

import psycopg2

DSN = "dbname=shop user=shop host=localhost"


def count_orders() -> int:
    with closing(psycopg2.connect(DSN)) as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM orders")
        return cur.fetchone()[0]


print(count_orders())
