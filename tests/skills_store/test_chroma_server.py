"""SKILLBANK_CHROMA_URL: the same skill bank code against a real `chroma run` server process."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from skills_store.bank import BankConfig, SkillBank
from skills_store.distill.merge import merge_into_bank
from skills_store.embedders import make_embedder
from skills_store.errors import ConfigError, SkillStoreError

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    with _chroma_run(tmp_path / "server-data") as url:
        yield url


@contextlib.contextmanager
def _chroma_run(data: Path, port: int | None = None) -> Iterator[str]:
    exe = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    if exe is None:
        pytest.fail("the chroma CLI (from the chromadb package) is not installed")
    port = port or _free_port()
    proc = subprocess.Popen(
        [exe, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(timeout=1.0) as client:
            for _ in range(300):
                if proc.poll() is not None:
                    pytest.fail(f"chroma run exited with {proc.returncode}")
                try:
                    if client.get(f"{url}/api/v2/heartbeat").status_code == 200:
                        break
                except httpx.TransportError:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=0.1)
            else:
                pytest.fail("chroma run did not answer within 30 s")
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def test_skills_written_through_a_chroma_server_are_found_and_survive_a_new_catalog(
    chroma_server: str, tmp_path: Path, skill_factory
) -> None:
    bank = SkillBank.open(tmp_path / "a", make_embedder("hash"), chroma_url=chroma_server)
    bank.upsert(
        [
            skill_factory("zero", "Division by zero", "ZeroDivisionError: division by zero", language="python"),
            skill_factory("key", "Missing key", "KeyError: 'id'", language="python"),
        ]
    )
    assert bank.search("ZeroDivisionError: division by zero", 1, count_use=False)[0].skill.skill_id == "zero"
    bank.close()
    # A second instance with an empty local catalog rebuilds it from the shared server.
    other = SkillBank.open(tmp_path / "b", make_embedder("hash"), chroma_url=chroma_server)
    try:
        assert other.count() == 2
        assert other.search("KeyError: 'id'", 1, language="python", count_use=False)[0].skill.skill_id == "key"
    finally:
        other.close()


def test_a_server_that_lost_its_data_gets_the_skills_back_from_the_catalog(
    chroma_server: str, tmp_path: Path, skill_factory
) -> None:
    bank = SkillBank.open(tmp_path / "a", make_embedder("hash"), chroma_url=chroma_server)
    bank.upsert([skill_factory("zero", "Division by zero", "ZeroDivisionError: division by zero")])
    bank.close()
    with _chroma_run(tmp_path / "new-server-data") as fresh:  # the same data dir on a server that starts empty
        again = SkillBank.open(tmp_path / "a", make_embedder("hash"), chroma_url=fresh)
        try:
            assert (again.count(), again.store.count()) == (1, 1)
            assert again.search("ZeroDivisionError: division by zero", 1, count_use=False)[0].skill.skill_id == "zero"
        finally:
            again.close()


def test_skills_all_deleted_through_another_instance_are_gone_from_this_one_too(
    chroma_server: str, tmp_path: Path, skill_factory
) -> None:
    first = SkillBank.open(tmp_path / "a", make_embedder("hash"), chroma_url=chroma_server)
    first.upsert([skill_factory("zero", "Division by zero", "ZeroDivisionError: division by zero")])
    second = SkillBank.open(tmp_path / "b", make_embedder("hash"), chroma_url=chroma_server)
    assert second.count() == 1
    second.close()
    first.delete(["zero"])
    first.close()
    second = SkillBank.open(tmp_path / "b", make_embedder("hash"), chroma_url=chroma_server)
    try:
        assert (second.count(), second.store.count()) == (0, 0)
    finally:
        second.close()


def test_a_chroma_server_that_goes_away_mid_session_fails_writes_by_name_and_searches_go_on_until_it_is_back(
    tmp_path: Path, skill_factory
) -> None:
    data, port = tmp_path / "server-data", _free_port()
    with _chroma_run(data, port) as url:
        bank = SkillBank.open(
            tmp_path / "a", make_embedder("hash"), chroma_url=url, config=BankConfig(shared_check_ms=0)
        )
        bank.upsert([skill_factory("zero", "Division by zero", "ZeroDivisionError: division by zero")])
    try:
        # Gone: a search answers from this instance's catalog (its check of the others' writes cannot be made) ...
        assert _ids(bank, "ZeroDivisionError: division by zero") == ["zero"]
        # ... and a write is refused with a store error naming the server, nothing half-written.
        with pytest.raises(SkillStoreError, match=rf"the Chroma server at {url} did not answer") as refused:
            bank.upsert([skill_factory("key", "Missing key", "KeyError: 'id'")])
        assert not isinstance(refused.value, ConfigError)
        assert bank.count() == 1
        with _chroma_run(data, port):  # back on the same address: the same bank object works again
            bank.upsert([skill_factory("key", "Missing key", "KeyError: 'id'")])
            assert _ids(bank, "KeyError: 'id'")[0] == "key"
            assert (bank.count(), bank.store.count()) == (2, 2)
    finally:
        bank.close()


def test_an_unreachable_chroma_url_is_a_config_error_naming_it(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(ConfigError, match=rf"cannot open the Chroma skill store at {url}"):
        SkillBank.open(tmp_path, make_embedder("hash"), chroma_url=url)


def test_a_malformed_chroma_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not an http"):
        SkillBank.open(tmp_path, make_embedder("hash"), chroma_url="localhost:8000")


@pytest.fixture
def two_instances(chroma_server: str, tmp_path: Path, skill_factory) -> Iterator[tuple[SkillBank, SkillBank]]:
    """Two skillbank instances (own data dirs, own catalogs) on one Chroma server, checking before every search."""
    config = BankConfig(shared_check_ms=0)
    first = SkillBank.open(tmp_path / "a", make_embedder("hash"), chroma_url=chroma_server, config=config)
    first.upsert(
        [
            skill_factory("zero", "Division by zero", "ZeroDivisionError: division by zero", sources=["t1"]),
            skill_factory("key", "Missing key", "KeyError: 'id'"),
        ]
    )
    second = SkillBank.open(tmp_path / "b", make_embedder("hash"), chroma_url=chroma_server, config=config)
    try:
        yield first, second
    finally:
        second.close()
        first.close()


def _ids(bank: SkillBank, query: str) -> list[str]:
    return [hit.skill.skill_id for hit in bank.search(query, 5, count_use=False)]


def test_an_edit_through_one_instance_that_keeps_the_count_is_seen_by_the_others_next_search(
    two_instances: tuple[SkillBank, SkillBank],
) -> None:
    first, second = two_instances
    assert second.get("key").title == "Missing key"
    edited = first.get("key")
    edited.title, edited.pattern = "Missing mapping key", "KeyError: 'user_id' in settings lookup"
    first.update([edited])
    hits = second.search("KeyError: 'user_id' in settings lookup", 1, count_use=False)
    assert (hits[0].skill.skill_id, hits[0].skill.title) == ("key", "Missing mapping key")
    assert second.get("key").pattern == "KeyError: 'user_id' in settings lookup"


def test_a_merge_and_a_delete_through_one_instance_are_seen_by_the_others_next_search(
    two_instances: tuple[SkillBank, SkillBank], skill_factory
) -> None:
    first, second = two_instances
    draft = skill_factory("zero", "Division by zero", "ZeroDivisionError: division by zero", sources=["t2"])
    assert merge_into_bank(first, [draft]).merged == [("zero", "zero")]
    assert set(second.search("ZeroDivisionError: division by zero", 1, count_use=False)[0].skill.sources) == {
        "t1",
        "t2",
    }
    # A delete plus an add keeps the count: the other instance still drops the one and finds the other.
    first.delete(["key"])
    first.upsert([skill_factory("attr", "Missing attribute", "AttributeError: 'NoneType' has no attribute 'x'")])
    assert "key" not in _ids(second, "KeyError: 'id'")
    assert _ids(second, "AttributeError: 'NoneType' has no attribute 'x'")[0] == "attr"
    assert second.count() == 2


def test_an_outcome_through_one_instance_moves_the_confidence_the_other_returns(
    two_instances: tuple[SkillBank, SkillBank],
) -> None:
    first, second = two_instances
    before = second.get("zero").confidence
    first.record_outcome(["zero"], success=True)
    assert second.search("ZeroDivisionError", 1, count_use=False)[0].skill.confidence > before


def test_the_other_instances_in_memory_vector_copy_follows_an_edit_and_a_delete(
    two_instances: tuple[SkillBank, SkillBank],
) -> None:
    first, second = two_instances
    assert [h.skill.skill_id for h in second.search("KeyError: 'id'", 1, mode="vector", count_use=False)] == ["key"]
    loads = second.searcher.mirror.loads
    edited = first.get("key")
    edited.title, edited.pattern, edited.strategy = "Overflow", "OverflowError: math range error", "Use logs."
    first.update([edited])
    hits = second.search("OverflowError: math range error", 2, mode="vector", count_use=False)
    assert (hits[0].skill.skill_id, hits[0].skill.title) == ("key", "Overflow")
    first.delete(["key"])
    assert "key" not in [h.skill.skill_id for h in second.search("OverflowError", 2, mode="vector", count_use=False)]
    assert second.searcher.mirror.loads == loads + 2  # the copy, not Chroma's index, answered each search


def test_the_change_marker_is_read_at_most_once_per_interval(chroma_server: str, tmp_path: Path, skill_factory) -> None:
    first = SkillBank.open(tmp_path / "a", make_embedder("hash"), chroma_url=chroma_server)
    slow = SkillBank.open(
        tmp_path / "b", make_embedder("hash"), chroma_url=chroma_server, config=BankConfig(shared_check_ms=3_600_000)
    )
    try:
        assert slow.record.catch_up() == 0  # opening checked a moment ago: the next check waits an hour
        first.upsert([skill_factory("key", "Missing key", "KeyError: 'id'")])
        assert slow.record.catch_up() == 0
        assert slow.count() == 0
        assert slow.record.catch_up(force=True) == 1
        assert slow.count() == 1
    finally:
        slow.close()
        first.close()


def test_an_instance_reopened_after_another_edited_catches_up_on_open(
    chroma_server: str, tmp_path: Path, skill_factory
) -> None:
    first = SkillBank.open(tmp_path / "a", make_embedder("hash"), chroma_url=chroma_server)
    first.upsert([skill_factory("key", "Missing key", "KeyError: 'id'")])
    SkillBank.open(tmp_path / "b", make_embedder("hash"), chroma_url=chroma_server).close()
    edited = first.get("key")
    edited.strategy = "Use dict.get with a default."
    first.update([edited])
    first.close()
    with SkillBank.open(tmp_path / "b", make_embedder("hash"), chroma_url=chroma_server) as second:
        assert second.get("key").strategy == "Use dict.get with a default."
