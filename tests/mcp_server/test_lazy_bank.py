"""LazySkillBank: opens only when a tool needs it, in a daemon thread, reports a broken bank clearly, retries."""

from __future__ import annotations

import os
import threading

import anyio
import pytest
from mcp import Client

from mcp_server import lazy
from mcp_server.app import create_server
from mcp_server.lazy import LazySkillBank, SkillBankUnavailable
from mcp_server.services import build_deps
from skills_store.errors import ConfigError

pytestmark = pytest.mark.anyio


async def test_a_failed_open_is_a_clear_error_and_is_retried_after_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[int] = []
    opened = object()

    def opener():
        attempts.append(1)
        if len(attempts) == 1:
            raise ConfigError("cannot open the Chroma skill store at http://chroma:8000: connection refused")
        return opened

    bank = LazySkillBank(opener)  # type: ignore[arg-type]
    bank.trigger()
    await bank.run(grace_s=None)
    with pytest.raises(SkillBankUnavailable, match="connection refused"):
        await bank.get()
    assert len(attempts) == 1  # not retried at once
    monkeypatch.setattr(lazy, "RETRY_AFTER_S", -1.0)
    assert await bank.get() is opened
    assert len(attempts) == 2


async def test_tools_that_need_no_model_never_open_the_bank(test_settings) -> None:
    release = threading.Event()
    asked: list[int] = []

    def slow_opener():
        asked.append(1)
        release.wait(30)  # a model load that never ends while the other tools run
        raise ConfigError("not needed")

    deps = build_deps(test_settings)
    deps.skills = LazySkillBank(slow_opener)  # type: ignore[arg-type]
    patch = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n"
    try:
        with anyio.fail_after(10):
            async with Client(create_server(deps)) as client:
                await client.list_tools()
                recorded = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought"}]})
                applied = await client.call_tool("apply_patch", {"patch": patch})
        assert not recorded.is_error
        assert not applied.is_error
        assert asked == []
    finally:
        release.set()


async def test_a_load_in_flight_is_abandoned_when_its_caller_is_cancelled() -> None:
    started, release = threading.Event(), threading.Event()

    def opener():
        started.set()
        release.wait(30)
        return object()

    bank = LazySkillBank(opener)  # type: ignore[arg-type]
    try:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(bank.run, 0.0)
                await anyio.to_thread.run_sync(started.wait)
                tg.cancel_scope.cancel()  # returns at once although the opener is still running
        assert bank.get_nowait() is None
        assert any(t.name == "skillbank-open-bank" and t.daemon for t in threading.enumerate())
    finally:
        release.set()


async def test_closing_the_bank_also_stops_its_embedder_worker() -> None:
    from skills_store.embedders.worker import WorkerEmbedder

    worker = WorkerEmbedder("hash")
    closed: list[str] = []

    class Bank:
        embedder = worker

        def close(self) -> None:
            closed.append("bank")

    bank = LazySkillBank(Bank)  # type: ignore[arg-type]
    bank.trigger()
    await bank.run(grace_s=None)
    pid = worker.pid
    assert pid is not None
    await bank.aclose()
    assert closed == ["bank"]
    assert worker.pid is None
    assert not os.path.exists(f"/proc/{pid}")
