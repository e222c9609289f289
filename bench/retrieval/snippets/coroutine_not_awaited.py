"""An async fetch called without await from another coroutine."""

import asyncio


async def fetch_profile(user_id: int) -> dict:
    await asyncio.sleep(0)
    return {"id": user_id, "name": "ada"}


async def main() -> None:
    profile = fetch_profile(1)
    print(profile["name"])


asyncio.run(main())
