"""Run with pytest (no async plugin): an async test function."""

import asyncio


async def fetch_status() -> int:
    await asyncio.sleep(0)
    return 200


async def test_fetch_status():
    assert await fetch_status() == 200
