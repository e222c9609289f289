"""The eval shows a one-shot prompt the skills `run_tests` would suggest: thresholded by relevance, often none."""

from __future__ import annotations

from pathlib import Path

from agent.eval.learn import skill_lookup
from skills_store.bank import SkillBank
from skills_store.embedders import make_embedder
from tests.conftest import make_skill


def test_the_eval_prompt_gets_only_skills_above_the_suggestion_threshold(tmp_path: Path) -> None:
    fits = make_skill("fits", "Missing key in a dict lookup", "KeyError: '<name>'", "Use .get() with a default.")
    other = make_skill("float", "Float equality", "AssertionError: assert 0.1 + 0.2 == 0.3", "Use pytest.approx.")
    unrelated = make_skill("loop", "Event loop closed", "RuntimeError: Event loop is closed", "Close it once.")
    with SkillBank.open(tmp_path / "bank", make_embedder("hash")) as bank:
        bank.upsert([fits, other, unrelated])
        lookup = skill_lookup(bank)
        assert [s.skill_id for s in lookup(["KeyError: 'qty'"])] == ["fits"]
        assert lookup(["sqlite3.OperationalError: database is locked"]) == []
        assert len(bank.search("sqlite3.OperationalError: database is locked", 3, count_use=False)) == 3
