"""The starter skill pack and the retrieval eval set built on it: valid data, consistent ids, real tracebacks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench.retrieval import build_evalset
from bench.retrieval.build_evalset import SNIPPETS, Snippet, SnippetDidNotFail, run_snippet
from bench.retrieval.descriptions import DESCRIPTIONS
from bench.retrieval.evaluate import EvalQuery, load_distractors, load_evalset
from skills_store.models import Skill
from skills_store.starter import load_starter_pack

REPO = Path(__file__).resolve().parents[2]
STARTER_PATH = REPO / "skills_store" / "data" / "starter_skills.jsonl"
EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Warning|Expired)\b")


def starter_lines() -> list[tuple[int, str]]:
    lines = STARTER_PATH.read_text(encoding="utf-8").splitlines()
    return [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]


@pytest.fixture(scope="module")
def starter() -> list[Skill]:
    return [Skill.model_validate_json(line) for _, line in starter_lines()]


@pytest.fixture(scope="module")
def evalset() -> list[EvalQuery]:
    return load_evalset()


def test_every_starter_line_is_a_valid_skill_object() -> None:
    problems = []
    for n, line in starter_lines():
        try:
            record = json.loads(line)
            Skill.model_validate(record)
        except ValueError as exc:
            problems.append(f"line {n}: {exc}")
    assert problems == []


def test_starter_pack_has_at_least_thirty_skills_with_unique_ids(starter: list[Skill]) -> None:
    ids = [s.skill_id for s in starter]
    assert len(ids) >= 30
    assert len(set(ids)) == len(ids)


def test_starter_skills_follow_the_pack_conventions(starter: list[Skill]) -> None:
    for skill in starter:
        assert skill.skill_id.startswith("starter-"), skill.skill_id
        assert skill.language == "python", skill.skill_id
        assert skill.repo is None, skill.skill_id
        assert skill.sources == ["starter-pack"], skill.skill_id
        assert 0.6 <= skill.confidence <= 0.85, skill.skill_id
        assert "python" in skill.tags, skill.skill_id
        assert len(skill.strategy) >= 200, f"{skill.skill_id}: a strategy needs concrete steps"


def test_starter_skills_have_distinct_patterns_and_titles(starter: list[Skill]) -> None:
    assert len({s.pattern for s in starter}) == len(starter)
    assert len({s.title.lower() for s in starter}) == len(starter)


def test_packaged_loader_returns_the_same_skills_as_the_file(starter: list[Skill]) -> None:
    assert [s.skill_id for s in load_starter_pack()] == [s.skill_id for s in starter]


def test_distractors_are_valid_and_never_collide_with_starter_ids(starter: list[Skill]) -> None:
    distractors = load_distractors()
    ids = [d.skill_id for d in distractors]
    assert len(ids) >= 15
    assert len(set(ids)) == len(ids)
    assert not set(ids) & {s.skill_id for s in starter}


def test_evalset_has_enough_pairs_from_real_tracebacks(evalset: list[EvalQuery]) -> None:
    tracebacks = [q for q in evalset if q.kind == "traceback"]
    assert len(evalset) >= 60
    assert len(tracebacks) >= 40
    assert {q.kind for q in evalset} == {"traceback", "description"}
    assert len({q.id for q in evalset}) == len(evalset)


def test_every_expected_skill_exists_in_the_starter_pack(evalset: list[EvalQuery], starter: list[Skill]) -> None:
    starter_ids = {s.skill_id for s in starter}
    missing = sorted({q.expected for q in evalset} - starter_ids)
    assert missing == []


def test_no_distractor_is_the_expected_answer_of_any_query(evalset: list[EvalQuery]) -> None:
    distractor_ids = {d.skill_id for d in load_distractors()}
    assert not {q.expected for q in evalset} & distractor_ids


def test_committed_evalset_covers_every_snippet_and_description(evalset: list[EvalQuery]) -> None:
    tracebacks = {q.snippet: q.expected for q in evalset if q.kind == "traceback"}
    assert tracebacks == {s.name: s.expected for s in SNIPPETS}
    descriptions = [(q.expected, q.snippet, q.query) for q in evalset if q.kind == "description"]
    assert descriptions == list(DESCRIPTIONS)


def test_every_snippet_file_is_listed_in_the_build_table() -> None:
    entries = build_evalset.SNIPPETS_DIR.iterdir()
    on_disk = {p.name for p in entries if (p.suffix == ".py" or p.is_dir()) and p.name[0] not in "._"}
    assert on_disk == {s.name for s in SNIPPETS}


def test_traceback_queries_end_with_the_failure_the_snippet_produced(evalset: list[EvalQuery]) -> None:
    for q in evalset:
        if q.kind != "traceback":
            continue
        assert "/tmp" not in q.query, q.id
        assert re.search(r"Error|Exception|Expired|FAILED|ERROR|failed", q.query), q.id


def test_descriptions_avoid_exception_class_names() -> None:
    offenders = [text for _, _, text in DESCRIPTIONS if EXCEPTION_NAME.search(text)]
    assert offenders == []


def test_running_a_snippet_captures_its_real_traceback_with_neutral_paths() -> None:
    output = run_snippet(Snippet("missing_export", "starter-cannot-import-name"))
    assert output.startswith("Traceback (most recent call last):")
    assert 'File "/home/dev/project/main.py", line 1' in output
    assert output.endswith(
        "ImportError: cannot import name 'compute_vat' from 'billing.tax' (/home/dev/project/billing/tax.py)"
    )


def test_a_snippet_that_exits_cleanly_is_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fine.py").write_text("print('all good')\n", encoding="utf-8")
    monkeypatch.setattr(build_evalset, "SNIPPETS_DIR", tmp_path)
    with pytest.raises(SnippetDidNotFail, match=r"fine\.py exited with status 0"):
        run_snippet(Snippet("fine.py", "starter-zero-division"))
