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
