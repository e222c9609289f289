"""The frozen held-out split: chosen once per output dir (seeded, stratified by task source) and reused after.

Held-out tasks are never solved for training, so skills can only reach them by generalising. The split is
written to `split.json` before anything runs; a later run in the same dir reads it back, and refuses to go on if
the task set changed (the numbers would no longer be comparable).
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel

from agent.tasks.model import TaskFolder
from skills_store.errors import InvalidInput

SPLIT_FILE = "split.json"


class EvalError(InvalidInput):
    """The eval cannot run as asked (bad arguments, a changed task set); the message says what to do."""


class Split(BaseModel):
    seed: int
    heldout_fraction: float
    train: list[str]
    heldout: list[str]


def make_split(tasks: list[TaskFolder], seed: int, heldout_fraction: float) -> Split:
    """Per source, a seeded shuffle; the first `heldout_fraction` of each goes to the held-out side."""
    if not 0 < heldout_fraction < 1:
        raise EvalError(f"the held-out fraction must be between 0 and 1, not {heldout_fraction}")
    if len(tasks) < 2:
        raise EvalError("an eval needs at least 2 tasks (one to learn from, one held out)")
    rng = random.Random(seed)
    by_source: dict[str, list[str]] = defaultdict(list)
    for tf in tasks:
        by_source[tf.task.source].append(tf.task.task_id)
    train: list[str] = []
    heldout: list[str] = []
    for source in sorted(by_source):
        ids = sorted(by_source[source])
        rng.shuffle(ids)
        cut = round(len(ids) * heldout_fraction)
        heldout += ids[:cut]
        train += ids[cut:]
    if not heldout:
        heldout.append(train.pop())
    if not train:
        train.append(heldout.pop())
    return Split(seed=seed, heldout_fraction=heldout_fraction, train=sorted(train), heldout=sorted(heldout))


def frozen_split(out: Path, tasks: list[TaskFolder], seed: int, heldout_fraction: float, *, save: bool = True) -> Split:
    """The split frozen in `out`, or a new one (written there unless `save=False`: the caller writes it with
    `write_split` once nothing can refuse the run any more)."""
    path = out / SPLIT_FILE
    ids = {tf.task.task_id for tf in tasks}
    if path.is_file():
        split = Split.model_validate(json.loads(path.read_text(encoding="utf-8")))
        if set(split.train) | set(split.heldout) != ids:
            raise EvalError(f"{path} froze a split of a different task set; use a new --out dir for these tasks")
        return split
    split = make_split(tasks, seed, heldout_fraction)
    if save:
        write_split(out, split)
    return split


def write_split(out: Path, split: Split) -> None:
    """Freeze `split` in `out` (creating it); a split already frozen there is kept."""
    path = out / SPLIT_FILE
    if path.is_file():
        return
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(split.model_dump_json(indent=2) + "\n", encoding="utf-8")
