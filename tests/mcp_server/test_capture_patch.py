"""What the trajectory keeps of a long patch: bounded, redacted, and redacted without scanning all of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp import Client

from mcp_server import capture_text
from mcp_server.app import create_server
from mcp_server.services import build_deps
from skills_store.redact import Redactor
from skills_store.trajectories.store import SQLiteTrajectoryStore

pytestmark = pytest.mark.anyio

# A password of plain words: found by its `DB_PASSWORD=` context alone (a random token would also be caught in
# pieces by the entropy rule), so a piece cut off from its context would be stored as it is.
SECRET = "correcthorsebatterystaple" * 3


def long_patch(secret_at: int, total: int = 200_000) -> str:
    """A new file of three lines, `total` characters of patch text, SECRET starting at `secret_at` (from the end
    when negative)."""
    head = "--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,3 @@\n"
    start = secret_at if secret_at >= 0 else total + secret_at
    middle = f"+DB_PASSWORD={SECRET}\n"
    before = start - len(head) - 1 - 1 - len("+DB_PASSWORD=")
    after = total - len(head) - (before + 2) - len(middle) - 2
    filler = "filler words " * (max(before, after) // 13 + 1)
    patch = f"{head}+{filler[:before]}\n{middle}+{filler[:after]}\n"
    assert patch.index(SECRET) == start
    assert len(patch) == total
    return patch


#: Where the stored text is cut (truncate_text keeps 2/3 head, 1/3 tail): the secret 20 characters either side.
HEAD_CUT = (capture_text.CAPTURE_TEXT_CHARS - 60) * 2 // 3
TAIL_CUT = (capture_text.CAPTURE_TEXT_CHARS - 60) // 3


async def stored_patch(test_settings, patch: str, *, worker: bool = False) -> str:
    """What the step of an `apply_patch` call stores of `patch`: redacted in the server's process, or with
    `worker` by the redaction worker (started first; the first long call alone would not wait for it)."""
    deps = build_deps(test_settings)
    redact_worker = deps.capture._redact_worker
    assert redact_worker is not None
    if worker:
        assert redact_worker.wait_ready(20)
    async with Client(create_server(deps)) as client:
        result = await client.call_tool("apply_patch", {"patch": patch, "dry_run": True})
        assert not result.is_error, result.content
        tid = (await client.call_tool("record_trajectory", {"steps": []})).structured_content["trajectory_id"]
    with SQLiteTrajectoryStore(Path(test_settings.home) / "trajectories.db") as store:
        (step,) = [s for s in store.get(tid).steps if s.tool == "apply_patch"]
    assert isinstance(step.args, dict)
    assert redact_worker.answered == (1 if worker and len(patch) >= redact_worker.min_chars else 0)
    redact_worker.close()
    return step.args["patch"]


@pytest.mark.parametrize("worker", [False, True], ids=["in-process", "worker"])
@pytest.mark.parametrize("where", [100, HEAD_CUT - 20, 100_000, -TAIL_CUT - 20, -200])
async def test_a_secret_anywhere_in_the_kept_part_of_a_long_patch_is_redacted(
    test_settings, where: int, worker: bool
) -> None:
    kept = await stored_patch(test_settings, long_patch(where), worker=worker)
    assert len(kept) <= capture_text.CAPTURE_TEXT_CHARS
    assert SECRET not in kept
    assert SECRET[:12] not in kept  # not even the part of it on either side of a cut
    assert SECRET[-12:] not in kept
    assert "characters truncated" in kept


async def test_a_long_patch_is_redacted_within_a_bounded_window(test_settings, monkeypatch) -> None:
    seen: list[int] = []
    original = Redactor.redact

    def spy(self, value):
        if isinstance(value, dict) and isinstance(value.get("patch"), str):
            seen.append(len(value["patch"]))
        return original(self, value)

    monkeypatch.setattr(Redactor, "redact", spy)
    await stored_patch(test_settings, long_patch(50_000, total=2_000_000))
    assert seen
    assert max(seen) <= capture_text.REDACT_WINDOW_CHARS


async def test_a_short_patch_is_kept_whole(test_settings) -> None:
    patch = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n"
    assert await stored_patch(test_settings, patch) == patch


@pytest.mark.parametrize("worker", [False, True], ids=["in-process", "worker"])
async def test_a_long_patch_keeps_its_redacted_head_and_tail_and_says_how_much_was_left_out(
    test_settings, worker: bool
) -> None:
    patch = long_patch(300, total=200_000)
    kept = await stored_patch(test_settings, patch, worker=worker)
    assert len(kept) <= capture_text.CAPTURE_TEXT_CHARS
    head, _, rest = kept.partition("\n[... ")
    count, _, tail = rest.partition(" characters truncated ...]\n")
    (marker,) = re.findall(r"\[REDACTED:[a-z-]+\]", head)
    assert head.replace(marker, SECRET) == patch[: len(head) - len(marker) + len(SECRET)]  # redacted, else as sent
    assert patch.endswith(tail)
    stored_of_patch = len(head) - len(marker) + len(SECRET) + len(tail)
    assert int(count.replace(",", "")) == len(patch) - stored_of_patch  # the size of what is not stored


async def test_a_refusal_quoting_a_line_that_is_not_utf8_is_captured_escaped(test_settings) -> None:
    """The refusal quotes the file's closest lines, read with `surrogateescape`; a Step cannot hold a lone
    surrogate, so the call was missing from the trajectory (and a traceback logged). It is stored escaped."""
    workspace = Path(test_settings.workspace)
    (workspace / "l.txt").write_bytes(b"caf\xe9\nfoo\nbar\n")
    deps = build_deps(test_settings)
    async with Client(create_server(deps)) as client:
        refused = await client.call_tool(
            "apply_patch", {"patch": "--- a/l.txt\n+++ b/l.txt\n@@ -1,2 +1,2 @@\n-zzz\n+y\n foo\n"}
        )
        assert refused.is_error
        tid = (await client.call_tool("record_trajectory", {"steps": []})).structured_content["trajectory_id"]
    with SQLiteTrajectoryStore(Path(test_settings.home) / "trajectories.db") as store:
        (step,) = [s for s in store.get(tid).steps if s.tool == "apply_patch"]
    assert not step.ok
    assert "caf\\xe9" in step.content
    assert (workspace / "l.txt").read_bytes() == b"caf\xe9\nfoo\nbar\n"


async def test_a_patch_step_is_committed_without_an_fsync_and_a_recorded_step_with_one(
    test_settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The patched files are written without an fsync, so their step is not fsynced either (it survives a crash of
    the server); what the agent records is."""
    durable: list[tuple[str, bool]] = []
    append, try_append = SQLiteTrajectoryStore.append, SQLiteTrajectoryStore.try_append

    def spy(self, trajectory_id, steps, **kwargs):
        durable.append((steps[0].tool or steps[0].kind, kwargs.get("durable", True)))
        return append(self, trajectory_id, steps, **kwargs)

    def try_spy(self, trajectory_id, steps, **kwargs):  # the patch's step, committed from the event loop
        durable.append((steps[0].tool or steps[0].kind, kwargs.get("durable", True)))
        return try_append(self, trajectory_id, steps, **kwargs)

    monkeypatch.setattr(SQLiteTrajectoryStore, "append", spy)
    monkeypatch.setattr(SQLiteTrajectoryStore, "try_append", try_spy)
    deps = build_deps(test_settings)
    async with Client(create_server(deps)) as client:
        patch = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\n"
        assert not (await client.call_tool("apply_patch", {"patch": patch})).is_error
        step = {"kind": "thought", "content": "the new file is in"}
        assert not (await client.call_tool("record_trajectory", {"steps": [step]})).is_error
    assert durable[:2] == [("apply_patch", False), ("thought", True)]


async def test_a_latin1_line_is_patched_through_the_tool_by_the_replacement_character_it_reads_as(
    test_settings,
) -> None:
    """A model reads `caf\\xe9` of a Latin-1 file as `caf\ufffd` and can send nothing else for it: the refusal says
    so, and a patch that writes U+FFFD there applies, the file keeping its byte."""
    workspace = Path(test_settings.workspace)
    (workspace / "l.txt").write_bytes(b"caf\xe9\nfoo\nbar\n")
    deps = build_deps(test_settings)
    async with Client(create_server(deps)) as client:
        refused = await client.call_tool(
            "apply_patch", {"patch": "--- a/l.txt\n+++ b/l.txt\n@@ -1,2 +1,2 @@\n-caf\xe9\n+cafe\n foo\n"}
        )
        assert refused.is_error
        text = refused.content[0].text
        assert "caf\\xe9" in text
        assert "line 1 holds bytes that are not UTF-8" in text
        done = await client.call_tool(
            "apply_patch", {"patch": "--- a/l.txt\n+++ b/l.txt\n@@ -1,2 +1,2 @@\n caf\ufffd\n-foo\n+FOO\n"}
        )
        assert not done.is_error
        assert done.structured_content["files"][0]["match"] == "unicode"
    assert (workspace / "l.txt").read_bytes() == b"caf\xe9\nFOO\nbar\n"
