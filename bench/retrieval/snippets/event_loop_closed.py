"""A client that remembers the loop of the first asyncio.run and is reused in a second one."""

import asyncio


class Client:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    async def get(self, path: str) -> str:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        done = self._loop.create_future()
        self._loop.call_soon(done.set_result, f"200 {path}")
        return await done


client = Client()
print(asyncio.run(client.get("/health")))
print(asyncio.run(client.get("/users")))
