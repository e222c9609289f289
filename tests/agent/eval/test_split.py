"""The held-out split: seeded, stratified by source, frozen in the output dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.eval.split import EvalError, frozen_split, make_split
from agent.tasks.model import load_tasks
from tests.agent.eval.conftest import SUITE


def test_the_split_is_seeded_disjoint_and_holds_out_every_source() -> None:
    tasks = load_tasks(SUITE)
    split = make_split(tasks, seed=3, heldout_fraction=0.5)
    assert split == make_split(tasks, seed=3, heldout_fraction=0.5)
    assert split != make_split(tasks, seed=4, heldout_fraction=0.5)
    assert not set(split.train) & set(split.heldout)
    assert len(split.train) + len(split.heldout) == len(tasks)
    source = {tf.task.task_id: tf.task.source for tf in tasks}
    assert {source[t] for t in split.heldout} == {tf.task.source for tf in tasks}


def test_a_frozen_split_is_reused_whatever_the_seed(small_tasks: Path, tmp_path: Path) -> None:
    tasks = load_tasks(small_tasks)
    first = frozen_split(tmp_path, tasks, seed=1, heldout_fraction=0.5)
    assert frozen_split(tmp_path, tasks, seed=99, heldout_fraction=0.5) == first


def test_bad_fractions_and_tiny_task_sets_are_refused(small_tasks: Path) -> None:
    tasks = load_tasks(small_tasks)
    with pytest.raises(EvalError, match="between 0 and 1"):
        make_split(tasks, 0, 1.0)
    with pytest.raises(EvalError, match="at least 2 tasks"):
        make_split(tasks[:1], 0, 0.5)
