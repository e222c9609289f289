"""Filters: one meaning in the catalog's SQL, FTS5 facet tokens and Chroma's where; unknown values refused."""

from __future__ import annotations

import pytest

from skills_store.errors import InvalidInput
from skills_store.search.filters import Filters, facet_tokens, validate_filters


def test_filters_build_sql_for_every_field() -> None:
    where, params = Filters(language="python", repo="a/b", tags=("x", "y"), min_confidence=0.5).sql()
    assert "s.language = ?" in where
    assert "s.repo = ?" in where
    assert "HAVING COUNT(*) = ?" in where
    assert params == ["python", "a/b", 0.5, "x", "y", 2]


def test_the_same_filter_reads_the_same_in_chroma_where() -> None:
    assert Filters().chroma_where() is None
    assert Filters(language="python").chroma_where() == {"language": "python"}
    assert Filters(language="python", tags=("x",), min_confidence=0.5).chroma_where() == {
        "$and": [{"language": "python"}, {"confidence": {"$gte": 0.5}}, {"tag:x": True}]
    }


def test_facet_tokens_are_single_tokens_whatever_the_value() -> None:
    tokens = facet_tokens(["c++", "a b"], "c#", "acme/api")
    assert len(tokens) == len(set(tokens)) == 4
    assert all(t.isalnum() for t in tokens)
    assert Filters(language="c#", repo="acme/api", tags=("c++", "a b")).fts_facets() == " AND ".join(
        f'facets:"{t}"' for t in tokens
    )


def test_filters_are_normalised_and_unknown_values_name_the_close_ones() -> None:
    known = {"language": ["python"], "repo": ["acme/api"], "tags": ["imports", "python"]}
    assert validate_filters(known, " Python ", None, ["Imports", "imports", " "], 0.2) == Filters(
        "python", None, ("imports",), 0.2
    )
    with pytest.raises(InvalidInput, match=r"unknown repo 'acme/apj' \(did you mean 'acme/api'\?\).*unknown tag 'x'"):
        validate_filters(known, None, "acme/apj", ["x"], 0.0)


def test_repo_filter_is_stripped_and_matched_ignoring_case() -> None:
    known = {"language": [], "repo": ["Acme/Beta", "other/x"], "tags": []}
    for asked in ("acme/beta", " Acme/Beta", "ACME/BETA\t", "Acme/Beta"):
        assert validate_filters(known, None, asked, None, 0.0) == Filters(repo="Acme/Beta")
    assert validate_filters(known, None, "  ", None, 0.0) == Filters()
    with pytest.raises(InvalidInput, match=r"unknown repo 'acme/betta' \(did you mean 'Acme/Beta'\?\)"):
        validate_filters(known, None, " acme/betta ", None, 0.0)


def test_a_repo_stored_in_two_spellings_is_selected_in_both_by_every_filter_language() -> None:
    known = {"language": [], "repo": ["Acme/Beta", "acme/beta"], "tags": []}
    filters = validate_filters(known, None, "acme/beta", None, 0.0)
    assert filters.repo == "acme/beta"  # the exact spelling first
    assert filters.repos == ("acme/beta", "Acme/Beta")
    where, params = filters.sql()
    assert (where, params) == ("s.repo IN (?,?)", ["acme/beta", "Acme/Beta"])
    assert filters.chroma_where() == {"repo": {"$in": ["acme/beta", "Acme/Beta"]}}
    a, b = (facet_tokens([], None, r)[0] for r in ("acme/beta", "Acme/Beta"))
    assert Filters(language="py", repo="acme/beta", repo_spellings=("Acme/Beta",)).fts_facets() == (
        f'facets:"{facet_tokens([], "py", None)[0]}" AND (facets:"{a}" OR facets:"{b}")'
    )


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_search_with_a_repo_filter_in_another_case_finds_the_repos_skills(hash_bank, skill_factory, mode) -> None:
    hash_bank.upsert([
        skill_factory("upper", "KeyError on a dict", "KeyError: 'name'", repo="Acme/Beta"),
        skill_factory("lower", "KeyError in a mapping", "KeyError: 'key'", repo="acme/beta"),
        skill_factory("elsewhere", "KeyError on a dict", "KeyError: 'name'", repo="other/x"),
    ])  # fmt: skip
    found = hash_bank.search("KeyError: 'name'", 5, repo=" ACME/beta ", mode=mode, count_use=False)
    assert {s.skill.skill_id for s in found} == {"upper", "lower"}
    with pytest.raises(InvalidInput, match="unknown repo 'acme/gamma'"):
        hash_bank.search("KeyError", 5, repo="acme/gamma", mode=mode)


def test_chroma_selects_every_spelling_of_the_repo(hash_bank, skill_factory) -> None:
    hash_bank.upsert([
        skill_factory("upper", "KeyError on a dict", "KeyError: 'name'", repo="Acme/Beta"),
        skill_factory("lower", "KeyError in a mapping", "KeyError: 'key'", repo="acme/beta"),
        skill_factory("elsewhere", "KeyError on a dict", "KeyError: 'name'", repo="other/x"),
    ])  # fmt: skip
    filters = validate_filters(hash_bank.known_values(), None, "ACME/BETA", None, 0.0)
    qv = hash_bank.embedder.embed(["KeyError: 'name'"])[0]
    assert {sid for sid, _ in hash_bank.store.query(qv, 2, where=filters.chroma_where())} == {"upper", "lower"}
