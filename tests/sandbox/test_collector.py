"""The collector pause around apply_patch: off while the engine runs, restored after, counted across threads."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from sandbox.collector import collector_paused
from sandbox.errors import PatchError
from sandbox.patch import apply_patch


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def _paused_then_raise() -> None:
    with collector_paused():
        assert not gc.isenabled()
        raise ValueError("boom")


def test_pause_restores_the_collector_even_when_the_block_raises():
    with pytest.raises(ValueError, match="boom"):
        _paused_then_raise()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_overlapping_pauses_in_two_threads_resume_only_after_the_last():
    first_in, second_done, release = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def long_pause() -> None:
        with collector_paused():
            first_in.set()
            release.wait(5)

    def short_pause() -> None:
        with collector_paused():
            pass
        seen.append(gc.isenabled())  # the other thread's pause still holds
        second_done.set()

    holder = threading.Thread(target=long_pause)
    holder.start()
    assert first_in.wait(5)
    threading.Thread(target=short_pause).start()
    assert second_done.wait(5)
    release.set()
    holder.join(5)
    assert seen == [False]
    assert gc.isenabled()


def test_apply_patch_runs_with_the_collector_paused_and_restores_it(tmp_path: Path, monkeypatch):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    states: list[bool] = []
    import sandbox.patch.apply as engine

    original = engine.Planner.run

    def spy(self, sections):
        states.append(gc.isenabled())
        return original(self, sections)

    monkeypatch.setattr(engine.Planner, "run", spy)
    apply_patch(tmp_path, "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n")
    assert states == [False]
    assert gc.isenabled()
    assert (tmp_path / "a.txt").read_text() == "one\nthree\n"
    with pytest.raises(PatchError):  # a refused patch restores it too
        apply_patch(tmp_path, "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-nothing\n+three\n")
    assert gc.isenabled()
