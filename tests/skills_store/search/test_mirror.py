"""The exact in-memory copy of the vectors (`search.mirror`): same answers as Chroma's index, in step with writes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from skills_store.bank import SkillBank
from skills_store.catalog import Catalog
from skills_store.embedders import make_embedder
from skills_store.search.mirror import BLOCK_ROWS, VectorMirror, matvec
from skills_store.search.plan import FilterPlan
from skills_store.search.vector import vector_hits

ERRORS = ["KeyError", "TypeError", "ValueError", "ImportError", "OSError", "IndexError", "NameError"]


@pytest.fixture
def bank(hash_bank: SkillBank, skill_factory) -> SkillBank:
    hash_bank.upsert(
        [
            skill_factory(
                f"s{i:03d}",
                f"{ERRORS[i % 7]} number {i}",
                f"{ERRORS[i % 7]}: '{['name', 'id', 'path', 'user', 'key'][i % 5]}_{i}' in module m{i % 13}",
                f"Check the value {i} before use.",
                language=["python", "javascript"][i % 2],
            )
            for i in range(120)
        ]
    )
    return hash_bank


def _vector_ids(bank: SkillBank, query: str, k: int = 5) -> list[str]:
    return [h.skill.skill_id for h in bank.search(query, k, mode="vector", count_use=False)]


def _count_chroma_queries(bank: SkillBank, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    query = bank.store.query

    def counting(*args, **kwargs):
        calls.append(1)
        return query(*args, **kwargs)

    monkeypatch.setattr(bank.store, "query", counting)
    return calls


def test_the_copy_answers_the_same_nearest_skills_and_cosines_as_chromas_index(bank: SkillBank) -> None:
    snapshot = bank.searcher.mirror.snapshot(bank.embedder.dim)
    assert snapshot is not None
    assert len(snapshot.ids) == 120
    plan = FilterPlan.unfiltered(bank.count())
    for i in range(0, 120, 7):
        qv = bank.embedder.embed([f"{ERRORS[i % 7]}: 'id_{i}' in module m{i % 13} (variant)"])[0]
        exact = vector_hits(bank.store, bank.catalog, qv, 10, plan, snapshot.score(qv))
        chroma = vector_hits(bank.store, bank.catalog, qv, 10, plan)
        assert np.allclose([s for _, s in exact], [s for _, s in chroma], atol=1e-5)
        # The same skills rank by rank, except where two have the same cosine (each index breaks ties its own way).
        tied = {round(s, 5) for (a, s), (b, _) in zip(exact, chroma, strict=True) if a != b}
        untied = {sid for sid, s in exact if round(s, 5) not in tied}
        assert untied == {sid for sid, s in chroma if round(s, 5) not in tied}


def test_an_unfiltered_search_asks_chroma_nothing_and_reads_the_copy_once(
    bank: SkillBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_chroma_queries(bank, monkeypatch)
    for i in range(5):
        bank.search(f"KeyError: 'id_{i}'", 5)  # counting uses writes the catalog, but not its vectors
    assert calls == []
    assert bank.searcher.mirror.loads == 1


def test_the_copy_follows_an_add_an_update_and_a_delete_in_this_instance(bank: SkillBank, skill_factory) -> None:
    query = "RecursionError: maximum recursion depth exceeded while calling a Python object"
    assert "recursion" not in _vector_ids(bank, query)
    bank.upsert([skill_factory("recursion", "Recursion too deep", query, "Add a base case.")])
    assert _vector_ids(bank, query)[0] == "recursion"
    moved = bank.get("recursion")
    moved.title, moved.strategy = "Ratio helper divides by zero", "Guard the divisor."
    moved.pattern = "ZeroDivisionError: float division by zero in the ratio helper"
    bank.update([moved])
    assert _vector_ids(bank, moved.pattern)[0] == "recursion"
    assert "recursion" not in _vector_ids(bank, query, 3)
    bank.delete(["recursion"])
    assert "recursion" not in _vector_ids(bank, moved.pattern, 120)
    assert bank.searcher.mirror.loads == 4


def test_a_write_by_another_process_reaches_the_copy(bank: SkillBank) -> None:
    _vector_ids(bank, "warm the copy")
    home = bank.catalog.path.parent
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from skills_store.bank import SkillBank
        from skills_store.embedders import make_embedder
        from skills_store.models import Skill
        with SkillBank.open(Path({str(home)!r}), make_embedder("hash")) as bank:
            bank.upsert([Skill(skill_id="late", title="Late arrival", pattern="TimeoutError: the late one",
                               strategy="Wait less.")])
            bank.delete(["s000"])
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert _vector_ids(bank, "TimeoutError: the late one")[0] == "late"
    assert "s000" not in _vector_ids(bank, "KeyError: 'name_0' in module m0", 120)


def test_a_store_larger_than_the_limit_is_searched_through_chromas_index(
    bank: SkillBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    bank.searcher.mirror.limit = 100
    calls = _count_chroma_queries(bank, monkeypatch)
    found = _vector_ids(bank, "TypeError: 'path_1' in module m1")
    assert bank.searcher.mirror.snapshot(bank.embedder.dim) is None
    assert len(calls) == 1
    assert bank.searcher.mirror.loads == 0  # the size is counted once per catalog generation; no copy is read
    bank.searcher.mirror.limit = 1000
    bank.delete(["s119"])  # a new generation: the size is counted again, and now the copy is read
    assert _vector_ids(bank, "TypeError: 'path_1' in module m1") == found
    assert (len(calls), bank.searcher.mirror.loads) == (1, 1)


def test_a_filtered_search_over_fetches_from_the_copy_and_keeps_only_matches(bank: SkillBank) -> None:
    bank.config.search.exact_limit = 1  # every filter counts as unselective: the copy over-fetches
    hits = bank.search("ValueError: 'user_2' in module m2", 5, language="javascript", mode="vector", count_use=False)
    assert len(hits) == 5
    assert all(h.skill.language == "javascript" for h in hits)
    bank.searcher.mirror.limit = 0
    again = bank.search("ValueError: 'user_2' in module m2", 5, language="javascript", mode="vector", count_use=False)
    assert [h.skill.skill_id for h in again] == [h.skill.skill_id for h in hits]


def test_vectors_of_another_dimension_leave_the_search_to_chroma(tmp_path: Path, skill_factory) -> None:
    with Catalog(tmp_path / "catalog.db") as catalog:
        catalog.upsert([skill_factory("a", "A", "KeyError: 'a'")], make_embedder("hash:64").embed(["a"]))
        catalog.upsert([skill_factory("b", "B", "KeyError: 'b'")], make_embedder("hash").embed(["b"]))
        mirror = VectorMirror(catalog, limit=1000)
        assert mirror.snapshot(384) is None
        catalog.delete(["a"])
        snapshot = mirror.snapshot(384)
        assert snapshot is not None
        assert snapshot.ids == ["b"]


def test_ties_come_in_stored_order_and_n_is_capped_at_the_store(tmp_path: Path, skill_factory) -> None:
    with Catalog(tmp_path / "catalog.db") as catalog:
        vector = make_embedder("hash").embed(["same"])
        catalog.upsert([skill_factory(sid, sid, "KeyError: 'x'") for sid in "cab"], np.repeat(vector, 3, axis=0))
        snapshot = VectorMirror(catalog, limit=1000).snapshot(384)
        assert snapshot is not None
        scores = snapshot.score(vector[0])
        assert [sid for sid, _ in scores.nearest(10)] == ["c", "a", "b"]
        assert [sid for sid, _ in scores.nearest(2)] == ["c", "a"]
        assert scores.cosines(["b", "nope"]) == {"b": pytest.approx(1.0)}


def test_the_blocked_product_equals_the_whole_one_for_any_number_of_rows() -> None:
    rng = np.random.default_rng(3)
    for rows in (0, 1, BLOCK_ROWS - 1, BLOCK_ROWS, 3 * BLOCK_ROWS + 7):
        matrix = rng.standard_normal((rows, 16)).astype(np.float32)
        qv = rng.standard_normal(16).astype(np.float32)
        assert np.allclose(matvec(matrix, qv), matrix @ qv, atol=1e-5)
