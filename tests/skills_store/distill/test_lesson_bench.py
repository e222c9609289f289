"""The lesson benchmark's targets hold on a subset: real sessions in 3 repos per lesson, two distilled, one unseen."""

from __future__ import annotations

import pytest

from bench.lessons.classes import LESSONS
from bench.lessons.evaluate import run

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# Two lessons that share exception type and receiver type but not their rule, and one removed stdlib API.
SUBSET = ["dict.iteritems", "dict.has_key", "time.clock"]


async def test_lessons_merge_across_repos_apart_from_each_other_and_rank_first_for_an_unseen_repo(tmp_path) -> None:
    lessons = [lesson for lesson in LESSONS if lesson.name in SUBSET]
    out = await run(lessons, tmp_path, embedder="hash", starter=True)
    assert out.precision() == 1.0
    assert out.recall() == 1.0
    assert out.search_first == dict.fromkeys(SUBSET, True)
    assert out.suggest_first == dict.fromkeys(SUBSET, True)
    assert sorted(out.rules.values()) == [
        "<mapping>.has_key(<name>) -> <name> in <mapping>",
        "<mapping>.iteritems() -> <mapping>.items()",
        "time.clock() -> time.perf_counter()",
    ]
