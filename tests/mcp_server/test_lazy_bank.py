"""LazySkillBank: opens after the handshake, reports a broken bank clearly, and retries after an outage."""

from __future__ import annotations

import pytest

from mcp_server import lazy
from mcp_server.lazy import LazySkillBank, SkillBankUnavailable
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
