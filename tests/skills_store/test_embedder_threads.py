"""The embedder worker's thread policy: one thread for a short query after an idle gap, every thread otherwise."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from skills_store.embedders.threads import IDLE_S, SHORT_CHARS, ThreadPolicy


class FakeTorch(SimpleNamespace):
    def __init__(self, threads: int) -> None:
        super().__init__(threads=threads, calls=[])

    def get_num_threads(self) -> int:
        return self.threads

    def set_num_threads(self, n: int) -> None:
        self.calls.append(n)
        self.threads = n


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _policy(threads: int = 2) -> tuple[ThreadPolicy, FakeTorch, Clock]:
    torch, clock = FakeTorch(threads), Clock()
    return ThreadPolicy(torch, clock=clock), torch, clock  # type: ignore[arg-type]


def test_a_short_query_after_an_idle_gap_runs_on_one_thread_and_the_next_one_right_after_on_all() -> None:
    policy, torch, clock = _policy()
    policy.before(["KeyError: 'name'"])
    assert torch.threads == 1
    policy.after()
    clock.now += IDLE_S / 4  # the pool still spins: every thread helps
    policy.before(["KeyError: 'other'"])
    assert torch.threads == 2
    policy.after()
    clock.now += IDLE_S * 2
    policy.before(["KeyError: 'third'"])
    assert torch.threads == 1
    assert torch.calls == [1, 2, 1]


@pytest.mark.parametrize(
    "texts",
    [["x" * (SHORT_CHARS + 1)], ["short one", "short two"], [], ["Traceback (most recent call last):\n" * 20]],
)
def test_batches_and_long_texts_keep_every_thread_even_after_a_gap(texts: list[str]) -> None:
    policy, torch, clock = _policy()
    clock.now += 10.0
    assert policy.threads_for(texts) == 2
    policy.before(texts)
    assert torch.calls == []


def test_the_configured_count_comes_back_after_a_one_thread_query() -> None:
    policy, torch, _ = _policy(threads=4)
    policy.before(["q"])
    policy.after()
    policy.before(["a batch", "of two"])
    assert (torch.threads, torch.calls) == (4, [1, 4])


def test_a_single_threaded_worker_is_left_alone() -> None:
    policy, torch, _ = _policy(threads=1)
    policy.before(["q"])
    policy.after()
    policy.before(["a", "b"])
    assert torch.calls == []


def test_a_worker_without_torch_loaded_sets_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    policy = ThreadPolicy(clock=Clock())
    assert policy.full == 1
    policy.before(["q"])  # the hashing embedder's worker: no pool to size
    policy.after()
