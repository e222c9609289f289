"""A sync helper that calls asyncio.run, used from async code."""

import asyncio


async def fetch_rates() -> dict:
    await asyncio.sleep(0)
    return {"EUR": 1.0, "USD": 1.08}


def get_rates() -> dict:
    return asyncio.run(fetch_rates())


async def handler() -> None:
    print(get_rates()["USD"])


asyncio.run(handler())
