"""A query sent to the embedder worker ahead of its search (`prefetch`): encoded once, its answer taken by the embed
that asks for it, dropped when another text is asked for instead, and never a wait for the caller."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest

from skills_store.embedders import CachedEmbedder
from skills_store.embedders import worker as worker_module
from skills_store.embedders.hashing import HashEmbedder
from skills_store.embedders.worker import WorkerEmbedder


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every request frame the parent writes to a worker."""
    frames: list[bytes] = []
    real = worker_module.write_frame

    def counting(stream, payload: bytes) -> None:
        frames.append(payload)
        real(stream, payload)

    monkeypatch.setattr(worker_module, "write_frame", counting)
    return frames


@pytest.fixture
def ready_worker():
    worker = WorkerEmbedder("hash")
    worker.embed(["the first request waits for the worker to be ready"])
    yield worker
    worker.close()


def test_a_text_sent_ahead_is_encoded_once_and_its_answer_serves_the_embed(ready_worker, sent) -> None:
    assert ready_worker.prefetch("KeyError: 'user_id'")
    calls: list[int] = []
    vectors, hits = ready_worker.embed_during(["KeyError: 'user_id'"], lambda: calls.append(1) or "keyword hits")
    assert np.array_equal(vectors, HashEmbedder().embed(["KeyError: 'user_id'"]))
    assert (hits, calls, len(sent)) == ("keyword hits", [1], 1)


def test_an_answer_nobody_asked_for_is_dropped_and_the_next_embed_gets_its_own(ready_worker, sent) -> None:
    assert ready_worker.prefetch("sent ahead, then not asked for")
    assert np.array_equal(ready_worker.embed(["another text"]), HashEmbedder().embed(["another text"]))
    assert np.array_equal(ready_worker.embed(["and one more"]), HashEmbedder().embed(["and one more"]))
    assert len(sent) == 3


def test_only_one_text_is_ahead_at_a_time(ready_worker, sent) -> None:
    assert ready_worker.prefetch("first")
    assert not ready_worker.prefetch("second")
    assert np.array_equal(ready_worker.embed(["second"]), HashEmbedder().embed(["second"]))
    assert len(sent) == 2


def test_prefetch_never_waits_for_a_busy_or_loading_worker(sent, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(worker_module.KNOWN, "hash", ("hash", 384))  # known up front, as MiniLM: not awaited
    worker = WorkerEmbedder("hash")  # spawned, its ready answer not read yet
    try:
        assert not worker.prefetch("before the worker is known to be ready")
        worker.embed(["ready now"])
        held = threading.Event()
        release = threading.Event()

        def busy() -> None:
            worker.embed_during(["a long batch"], lambda: (held.set(), release.wait(5)))

        thread = threading.Thread(target=busy)
        thread.start()
        assert held.wait(5)
        assert not worker.prefetch("while another request holds the worker")
        release.set()
        thread.join(5)
        assert [s for s in sent if b"while another" in s] == []
    finally:
        worker.close()


def test_a_worker_killed_with_a_text_ahead_is_replaced_and_the_embed_answered(ready_worker) -> None:
    first = ready_worker.pid
    os.kill(first, signal.SIGSTOP)  # it never reads the text sent ahead
    assert ready_worker.prefetch("ahead of a crash")
    os.kill(first, signal.SIGKILL)
    assert np.array_equal(ready_worker.embed(["ahead of a crash"]), HashEmbedder().embed(["ahead of a crash"]))
    assert ready_worker.pid != first


def test_the_cache_sends_ahead_only_what_it_does_not_hold(ready_worker, sent) -> None:
    cached = CachedEmbedder(ready_worker)
    cached.embed(["known"])
    assert not cached.prefetch("known")
    assert cached.prefetch("new")
    vectors, _ = cached.embed_during(["new"], lambda: None)
    assert np.array_equal(vectors[0], HashEmbedder().embed(["new"])[0])
    assert len(sent) == 2
    assert not CachedEmbedder(HashEmbedder()).prefetch("an in-process embedder has nothing to send ahead")


def test_an_answer_read_for_another_request_is_kept_for_the_one_that_asks(ready_worker, sent) -> None:
    """Two searches at once: the first sends its text ahead, the second reaches the worker first."""
    assert ready_worker.prefetch("the first search's query")
    assert np.array_equal(ready_worker.embed(["the second's"]), HashEmbedder().embed(["the second's"]))
    first = ready_worker.embed(["the first search's query"])
    assert np.array_equal(first, HashEmbedder().embed(["the first search's query"]))
    assert len(sent) == 2  # the first text was encoded once, not again


def test_a_search_after_its_prefetch_analyses_the_query_once(
    hash_bank, skill_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skills_store.search import engine

    hash_bank.upsert([skill_factory("keyerror", "KeyError", "KeyError: 'k'", "Use dict.get.")])
    calls: list[str] = []
    real = engine.analyze

    def counting(query: str):
        calls.append(query)
        return real(query)

    monkeypatch.setattr(engine, "analyze", counting)
    hash_bank.prefetch("KeyError: 'user_id' in handlers.py")
    hash_bank.search("KeyError: 'user_id' in handlers.py", 3, count_use=False)
    hash_bank.search("another query", 3, count_use=False)
    assert calls == ["KeyError: 'user_id' in handlers.py", "another query"]
