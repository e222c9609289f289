"""SkillBank: hybrid search, filters, counters, consistency between Chroma and the catalog."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skills_store.bank import SkillBank
from skills_store.embedders import make_embedder
from skills_store.errors import ConfigError, InvalidInput, NotFound

TRACEBACK = """Traceback (most recent call last):
  File "/tmp/app/main.py", line 3, in <module>
    import collectionz
ModuleNotFoundError: No module named 'collectionz'
"""


@pytest.fixture
def bank(hash_bank: SkillBank, skill_factory) -> SkillBank:
    hash_bank.upsert(
        [
            skill_factory(
                "missing-module",
                "Missing module",
                "ModuleNotFoundError: No module named 'X'",
                "Install X into the interpreter that runs the code.",
                tags=["python", "imports"],
                language="python",
                confidence=0.8,
            ),
            skill_factory(
                "circular",
                "Circular import",
                "ImportError: cannot import name 'X' from partially initialized module 'Y'",
                "Move the import into the function that needs it.",
                tags=["python", "imports"],
                language="python",
            ),
            skill_factory(
                "keyerror",
                "KeyError on a dict",
                "KeyError: 'name'",
                "Use dict.get with a default, or check membership first.",
                tags=["python"],
                language="python",
                repo="acme/api",
            ),
            skill_factory(
                "js-undefined",
                "Cannot read properties of undefined",
                "TypeError: Cannot read properties of undefined (reading 'x')",
                "Guard with optional chaining.",
                tags=["javascript"],
                language="javascript",
            ),
        ]
    )
    return hash_bank


def test_traceback_finds_the_missing_module_skill_first_in_every_mode(bank: SkillBank) -> None:
    for mode in ("hybrid", "vector", "keyword"):
        hits = bank.search(TRACEBACK, 3, mode=mode, count_use=False)
        assert hits[0].skill.skill_id == "missing-module", mode


def test_a_model_in_a_worker_process_ranks_as_the_same_model_in_process(bank: SkillBank) -> None:
    """The server runs the model in a worker process (`make_embedder(isolated=True)`): the same hits, same relevance."""
    from skills_store.embedders import CachedEmbedder
    from skills_store.embedders.worker import WorkerEmbedder

    queries = [TRACEBACK, "KeyError: 'name'", "cannot read properties of undefined", "circular import"]
    expected = [[(h.skill.skill_id, h.relevance) for h in bank.search(q, 4, count_use=False)] for q in queries]
    worker = WorkerEmbedder("hash")
    try:
        bank.embedder = bank.searcher.embedder = CachedEmbedder(worker)
        assert [[(h.skill.skill_id, h.relevance) for h in bank.search(q, 4, count_use=False)] for q in queries] == (
            expected
        )
    finally:
        worker.close()


def test_hybrid_score_is_one_when_both_sides_rank_a_skill_first(bank: SkillBank) -> None:
    bank.config.search.fusion.confidence_weight = 0.0
    top = bank.search(TRACEBACK, 1, count_use=False)[0]
    assert top.ranks == {"vector": 1, "keyword": 1}
    assert top.score == pytest.approx(1.0)


def test_empty_store_answers_no_skills(hash_bank: SkillBank) -> None:
    assert hash_bank.search("anything", 5) == []


def test_every_returned_skill_counts_one_use(bank: SkillBank) -> None:
    hits = bank.search(TRACEBACK, 2)
    assert [h.skill.uses for h in hits] == [1, 1]
    assert bank.get(hits[0].skill.skill_id).uses == 1
    bank.search(TRACEBACK, 2)
    assert bank.get(hits[0].skill.skill_id).uses == 2


def test_use_counters_reach_chroma_on_flush(bank: SkillBank) -> None:
    bank.search(TRACEBACK, 1)
    assert bank.store.get(["missing-module"])[0].uses == 0
    bank.flush()
    assert bank.store.get(["missing-module"])[0].uses == 1


def test_language_filter_keeps_only_that_language(bank: SkillBank) -> None:
    hits = bank.search("TypeError undefined", 5, language="javascript", count_use=False)
    assert [h.skill.skill_id for h in hits] == ["js-undefined"]


def test_tag_filter_requires_every_tag(bank: SkillBank) -> None:
    hits = bank.search("import problem", 5, tags=["python", "imports"], count_use=False)
    assert {h.skill.skill_id for h in hits} == {"missing-module", "circular"}


def test_repo_and_min_confidence_filters(bank: SkillBank) -> None:
    assert [h.skill.skill_id for h in bank.search("KeyError", 5, repo="acme/api", count_use=False)] == ["keyerror"]
    assert [h.skill.skill_id for h in bank.search("import", 5, min_confidence=0.75, count_use=False)] == [
        "missing-module"
    ]


def test_unknown_filter_values_are_refused_with_suggestions(bank: SkillBank) -> None:
    with pytest.raises(InvalidInput, match=r"unknown language 'pyhton' \(did you mean 'python'\?\)"):
        bank.search("x", language="pyhton")
    with pytest.raises(
        InvalidInput,
        match=r"unknown repo 'acme/web' \(did you mean 'acme/api'\?\); unknown tag 'nope' \(known: imports",
    ):
        bank.search("x", tags=["nope"], repo="acme/web")


def test_unselective_filter_over_fetches_from_the_ann_index(bank: SkillBank) -> None:
    bank.config.search.exact_limit = 1  # every filter now counts as unselective
    hits = bank.search(TRACEBACK, 2, language="python", count_use=False)
    assert hits[0].skill.skill_id == "missing-module"
    assert all(h.skill.language == "python" for h in hits)


def test_upsert_replaces_a_skill_and_search_sees_the_new_text(bank: SkillBank, skill_factory) -> None:
    bank.upsert([skill_factory("keyerror", "Renamed", "ZeroDivisionError: division by zero", language="python")])
    hit = bank.search("ZeroDivisionError: division by zero", 1, mode="keyword", count_use=False)[0]
    assert hit.skill.skill_id == "keyerror"
    assert hit.skill.title == "Renamed"
    assert bank.count() == 4


def test_duplicate_ids_in_one_upsert_are_refused(hash_bank: SkillBank, skill_factory) -> None:
    with pytest.raises(InvalidInput, match="duplicate skill ids"):
        hash_bank.upsert([skill_factory("a", "t", "p"), skill_factory("a", "t2", "p2")])
    assert hash_bank.count() == 0


def test_delete_removes_from_both_stores(bank: SkillBank) -> None:
    assert bank.delete(["circular", "no-such"]) == 1
    assert bank.store.count() == bank.catalog.count() == 3
    with pytest.raises(NotFound):
        bank.get("circular")


def test_record_outcome_moves_confidence_along_the_beta_posterior(bank: SkillBank) -> None:
    before = bank.get("circular").confidence
    (after,) = bank.record_outcome(["circular"], success=True)
    assert after.confidence > before
    assert bank.get("circular").successes == 1
    (worse,) = bank.record_outcome(["circular", "circular"], success=False)
    assert worse.failures == 1
    assert worse.confidence < after.confidence


def test_catalog_is_rebuilt_from_chroma_when_they_disagree(tmp_path: Path, bank: SkillBank) -> None:
    home = bank.catalog.path.parent
    bank.close()
    (home / "catalog.db").unlink()
    for suffix in ("-wal", "-shm"):
        (home / f"catalog.db{suffix}").unlink(missing_ok=True)
    reopened = SkillBank.open(home, make_embedder("hash"))
    try:
        assert reopened.count() == 4
        assert reopened.search(TRACEBACK, 1, mode="keyword", count_use=False)[0].skill.skill_id == "missing-module"
    finally:
        reopened.close()


def test_a_missing_chroma_dir_is_restored_from_the_catalog_not_taken_for_an_empty_bank(
    bank: SkillBank, caplog: pytest.LogCaptureFixture
) -> None:
    """It was: the catalog was rebuilt from the new, empty record, and every skill was gone without a word."""
    home = bank.catalog.path.parent
    before = {s.skill_id: s for s in bank.list_skills(limit=100)}
    bank.record_outcome(["missing-module"], success=True)
    confidence = bank.get("missing-module").confidence
    bank.close()
    shutil.rmtree(home / "chroma")
    with caplog.at_level("WARNING"):
        reopened = SkillBank.open(home, make_embedder("hash"))
    try:
        assert {s.skill_id for s in reopened.list_skills(limit=100)} == set(before)
        assert reopened.store.count() == len(before)
        assert reopened.get("missing-module").confidence == confidence
        assert reopened.search(TRACEBACK, 1, mode="vector", count_use=False)[0].skill.skill_id == "missing-module"
        assert "were written back into it from the catalog" in caplog.text
    finally:
        reopened.close()
    again = SkillBank.open(home, make_embedder("hash"))  # restored for good: nothing to do on the next open
    try:
        assert again.store.count() == len(before)
    finally:
        again.close()


def test_a_bank_whose_skills_were_all_deleted_stays_empty(bank: SkillBank) -> None:
    home = bank.catalog.path.parent
    bank.delete([s.skill_id for s in bank.list_skills(limit=100)])
    bank.close()
    reopened = SkillBank.open(home, make_embedder("hash"))
    try:
        assert (reopened.count(), reopened.store.count()) == (0, 0)
    finally:
        reopened.close()


def test_changing_the_embedder_is_refused_until_reembedded(bank: SkillBank) -> None:
    home = bank.catalog.path.parent
    bank.close()
    with pytest.raises(ConfigError, match="embedded with hash:384, not hash:64"):
        SkillBank.open(home, make_embedder("hash:64"))
    reopened = SkillBank.open(home, make_embedder("hash:64"), reembed=True)
    try:
        assert reopened.search(TRACEBACK, 1, count_use=False)[0].skill.skill_id == "missing-module"
    finally:
        reopened.close()


def test_a_write_from_another_process_is_seen_by_the_vector_index(bank: SkillBank) -> None:
    home = bank.catalog.path.parent
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from skills_store.bank import SkillBank
        from skills_store.embedders import make_embedder
        from skills_store.models import Skill
        bank = SkillBank.open(Path({str(home)!r}), make_embedder("hash"))
        bank.upsert([Skill(skill_id="recursion", title="Recursion too deep",
                           pattern="RecursionError: maximum recursion depth exceeded", strategy="Add a base case.")])
        bank.close()
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    hits = bank.search("RecursionError: maximum recursion depth exceeded", 1, mode="vector", count_use=False)
    assert hits[0].skill.skill_id == "recursion"


def test_similar_finds_near_duplicates_in_the_same_scope_only(bank: SkillBank, skill_factory) -> None:
    draft = skill_factory(
        "draft", "Missing module", "ModuleNotFoundError: No module named 'Y'", "Install Y.", language="python"
    )
    hits = bank.similar(draft, 3)
    assert hits[0].skill.skill_id == "missing-module"
    assert all(h.skill.language == "python" and h.skill.repo is None for h in hits)
    assert "keyerror" not in {h.skill.skill_id for h in hits}  # repo acme/api is another scope
    assert 0.0 < hits[0].score <= 1.0


def test_reopening_the_vector_index_waits_for_queries_in_flight(bank: SkillBank, monkeypatch) -> None:
    import threading

    bank.searcher.mirror.limit = 0  # the vector side queries Chroma's index, as on a store too large to copy
    store = bank.store
    real_query, real_reopen = store.query, store.reopen
    inside, release, reopened = threading.Event(), threading.Event(), threading.Event()
    events: list[str] = []

    def slow_query(*args, **kwargs):
        inside.set()
        assert release.wait(10)
        events.append("query done")
        return real_query(*args, **kwargs)

    def reopen() -> None:
        events.append("reopen")
        real_reopen()
        reopened.set()

    monkeypatch.setattr(store, "query", slow_query)
    monkeypatch.setattr(store, "reopen", reopen)
    searcher = threading.Thread(target=lambda: bank.search(TRACEBACK, 1, mode="vector", count_use=False))
    searcher.start()
    assert inside.wait(10)
    bank.catalog.set_meta("generation", "written-by-another-process")
    refresher = threading.Thread(target=bank._writers.refresh_if_stale)
    refresher.start()
    assert not reopened.wait(0.2)  # blocked behind the query in flight
    release.set()
    searcher.join(10)
    refresher.join(10)
    assert events == ["query done", "reopen"]


def test_a_writer_with_an_older_copy_does_not_undo_uses_counted_meanwhile(bank: SkillBank) -> None:
    stale = bank.get("keyerror")
    bank.search("KeyError: 'name'", 1, repo="acme/api")
    bank.search("KeyError: 'name'", 1, repo="acme/api")
    stale.strategy = "Use dict.get with a default."
    bank.update([stale])
    assert bank.get("keyerror").uses == 2
    assert bank.get("keyerror").strategy == "Use dict.get with a default."


def test_concurrent_outcomes_are_all_counted(bank: SkillBank) -> None:
    import threading

    threads = [threading.Thread(target=bank.record_outcome, args=(["circular"], True)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert bank.get("circular").successes == 8


def test_suggestions_for_failures_take_each_skill_once_and_count_only_those_returned(bank: SkillBank) -> None:
    failures = [TRACEBACK, "KeyError: 'name'", "ModuleNotFoundError: No module named 'collectionz'"]
    top = bank.suggest_for_failures(failures, k=2, threshold=0.0)
    ids = [h.skill.skill_id for h in top]
    assert len(ids) == len(set(ids)) == 2
    assert set(ids) == {"missing-module", "keyerror"}
    assert [h.score for h in top] == sorted((h.score for h in top), reverse=True)
    assert all(h.skill.uses == 1 for h in top)  # the returned copies say so too
    uses = {s.skill_id: s.uses for s in bank.list_skills(limit=10)}
    assert uses == {"missing-module": 1, "keyerror": 1, "circular": 0, "js-undefined": 0}


def test_the_failure_messages_of_a_run_are_encoded_as_one_batch(bank: SkillBank, monkeypatch) -> None:
    inner = bank.embedder.inner  # type: ignore[attr-defined]
    batches: list[int] = []
    real = inner.embed

    def counting(texts):
        batches.append(len(texts))
        return real(texts)

    monkeypatch.setattr(inner, "embed", counting)
    failures = [TRACEBACK, "KeyError: 'name'", "ModuleNotFoundError: No module named 'collectionz'", "KeyError: 'name'"]
    alone = {q: [h.skill.skill_id for h in bank.search(q, 2, count_use=False)] for q in failures}
    batches.clear()
    bank.embedder._cache.clear()  # type: ignore[attr-defined]
    top = bank.suggest_for_failures(failures, k=2, threshold=0.0)
    assert batches == [3]  # the repeated message once, and no search encodes again
    assert {h.skill.skill_id for h in top} <= {sid for ids in alone.values() for sid in ids}


def test_suggestions_carry_only_hits_whose_relevance_reaches_the_threshold(bank: SkillBank) -> None:
    hits = bank.search("KeyError: 'name'", 4, count_use=False)
    assert all(h.relevance is not None and 0.0 <= h.relevance <= 1.0 for h in hits)
    best = max(hits, key=lambda h: h.relevance or 0.0)
    kept = bank.suggest_for_failures(["KeyError: 'name'"], k=3, threshold=best.relevance)
    assert [h.skill.skill_id for h in kept] == [best.skill.skill_id]
    assert bank.suggest_for_failures(["KeyError: 'name'"], k=3, threshold=1.0) == []
    uses = {s.skill_id: s.uses for s in bank.list_skills(limit=10)}
    assert uses[best.skill.skill_id] == 1
    assert sum(uses.values()) == 1


def test_no_failures_suggest_nothing_and_count_nothing(bank: SkillBank) -> None:
    assert bank.suggest_for_failures([], k=3) == []
    assert all(s.uses == 0 for s in bank.list_skills(limit=10))


def test_the_bank_is_a_context_manager_that_closes_everything(tmp_path: Path, skill_factory) -> None:
    with SkillBank.open(tmp_path / "b", make_embedder("hash")) as bank:
        bank.upsert([skill_factory("k", "KeyError", "KeyError: 'x'")])
        bank.search("KeyError", 1)
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        bank.catalog.count()  # the catalog's connection is closed
    with SkillBank.open(tmp_path / "b", make_embedder("hash")) as again:
        assert again.store.get(["k"])[0].uses == 1  # the pending use count was flushed on close


def test_a_writer_in_another_process_holds_off_this_ones_writes(bank: SkillBank, skill_factory) -> None:
    import threading

    lock = bank.catalog.path.with_name(".skills.lock")
    script = textwrap.dedent(
        f"""
        import filelock, sys
        with filelock.FileLock({str(lock)!r}):
            print("held", flush=True)
            sys.stdin.readline()
        """
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        writer = threading.Thread(target=lambda: bank.upsert([skill_factory("late", "Late", "LateError: x")]))
        writer.start()
        writer.join(0.5)
        assert writer.is_alive()  # waiting for the other process's lock
        assert bank.catalog.get(["late"]) == []
    finally:
        holder.communicate("release\n", timeout=10)
    writer.join(10)
    assert [s.skill_id for s in bank.catalog.get(["late"])] == ["late"]
