"""Search filters: what a `language` / `repo` / `tags` / `min_confidence` filter means, in every language it is
spoken in (the catalog's SQL, FTS5 facet tokens, Chroma's `where`), and the validation that refuses unknown values.

Stored skills carry the same facet tokens as the filters that select them (`facet_tokens` is used by the catalog
when it indexes a skill and by the keyword side when it filters), so the two can never drift apart.
Imports nothing heavy: the Claude Code hook filters its keyword-only search with it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from skills_store.errors import InvalidInput


@dataclass(frozen=True)
class Filters:
    language: str | None = None
    repo: str | None = None
    """The repo as the skills store it."""
    tags: tuple[str, ...] = ()
    """Every tag must be present."""
    min_confidence: float = 0.0
    repo_spellings: tuple[str, ...] = ()
    """Other stored spellings of the same repo, also selected (GitHub's owner/name ignore case, so `Acme/Beta`
    and `acme/beta` are one repo even when clones of both were distilled); `validate_filters` fills it."""

    @property
    def active(self) -> bool:
        return bool(self.language or self.repo or self.tags or self.min_confidence > 0)

    @property
    def repos(self) -> tuple[str, ...]:
        """Every stored spelling the repo filter selects (none without a repo filter)."""
        return tuple(dict.fromkeys([self.repo, *self.repo_spellings])) if self.repo else ()

    def fts_facets(self) -> str | None:
        """The language, repo and tag filters as an FTS5 expression over the `facets` column (AND of tokens)."""
        terms = [f'facets:"{t}"' for t in facet_tokens(self.tags, self.language, None)]
        repos = [f'facets:"{facet_token("r", r)}"' for r in self.repos]
        if repos:
            terms.append(repos[0] if len(repos) == 1 else f"({' OR '.join(repos)})")
        return " AND ".join(terms) or None

    def sql(self, alias: str = "s") -> tuple[str, list[object]]:
        """A WHERE clause over the catalog's `skills` table (aliased `alias`) and its parameters."""
        clauses: list[str] = []
        params: list[object] = []
        if self.language:
            clauses.append(f"{alias}.language = ?")
            params.append(self.language)
        if self.repos:
            clauses.append(
                f"{alias}.repo IN ({','.join('?' * len(self.repos))})" if len(self.repos) > 1 else f"{alias}.repo = ?"
            )
            params.extend(self.repos)
        if self.min_confidence > 0:
            clauses.append(f"{alias}.confidence >= ?")
            params.append(self.min_confidence)
        if self.tags:
            marks = ",".join("?" * len(self.tags))
            clauses.append(
                f"{alias}.rid IN (SELECT rid FROM skill_tags WHERE tag IN ({marks}) GROUP BY rid HAVING COUNT(*) = ?)"
            )
            params.extend([*self.tags, len(self.tags)])
        return (" AND ".join(clauses) or "1"), params

    def chroma_where(self) -> dict | None:
        """The same filter in Chroma's `where` language (tags are stored as `tag:<name>: true`)."""
        clauses: list[dict] = []
        if self.language:
            clauses.append({"language": self.language})
        if self.repos:
            clauses.append({"repo": self.repos[0]} if len(self.repos) == 1 else {"repo": {"$in": list(self.repos)}})
        if self.min_confidence > 0:
            clauses.append({"confidence": {"$gte": self.min_confidence}})
        clauses.extend({f"tag:{t}": True} for t in self.tags)
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def facet_token(kind: str, value: str) -> str:
    """One FTS token that stands for a filter value (`l` language, `r` repo, `t` tag).

    Hex keeps any value a single token; the trailing digit keeps the porter stemmer away from it.
    """
    return f"f{kind}{value.encode().hex()}9"


def facet_tokens(tags: Sequence[str], language: str | None, repo: str | None) -> list[str]:
    """The facet tokens of a skill's filter fields, or of a filter on them."""
    tokens = [facet_token("t", t) for t in tags]
    if language:
        tokens.append(facet_token("l", language))
    if repo:
        tokens.append(facet_token("r", repo))
    return tokens


def validate_filters(
    known: dict[str, list[str]],
    language: str | None,
    repo: str | None,
    tags: Sequence[str] | None,
    min_confidence: float,
) -> Filters:
    """Normalise the filters; unknown values are refused with the close matches (`InvalidInput`).

    Language and tags are stored lower-case, so the filter is lower-cased. A repo keeps the spelling its origin
    remote gave it (`Acme/Beta`), so the filter is stripped and matched against the stored spellings ignoring case.
    """
    language = language.strip().lower() if language else None
    norm_tags = tuple(dict.fromkeys(t.strip().lower() for t in tags or () if t.strip()))
    repo = repo.strip() if repo else None
    spellings = [r for r in known["repo"] if r.casefold() == repo.casefold()] if repo else []
    problems = []
    if language and language not in known["language"]:
        problems.append(_unknown("language", language, known["language"]))
    if repo and not spellings:
        problems.append(_unknown("repo", repo, known["repo"]))
    for tag in norm_tags:
        if tag not in known["tags"]:
            problems.append(_unknown("tag", tag, known["tags"]))
    if problems:
        raise InvalidInput("; ".join(problems) + ". Fix or omit these filters to search every skill.")
    if spellings:  # the exact spelling first, when it is stored
        spellings.sort(key=lambda r: r != repo)
        return Filters(language, spellings[0], norm_tags, min_confidence, tuple(spellings[1:]))
    return Filters(language, repo or None, norm_tags, min_confidence)


#: A value quoted back in a refusal is cut to this many characters (it may be as long as the caller sent).
QUOTED_CHARS = 60


def excerpt(value: str, limit: int = QUOTED_CHARS) -> str:
    """`value` quoted (`repr`), its head only when it is longer than `limit`, with how long it was."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value):,} characters)"


def _unknown(kind: str, value: str, known: list[str]) -> str:
    close = difflib.get_close_matches(value, known, n=3, cutoff=0.6)
    if close:
        return f"unknown {kind} {excerpt(value)} (did you mean {', '.join(map(repr, close))}?)"
    listed = ", ".join(known[:12]) + (" ..." if len(known) > 12 else "")
    return f"unknown {kind} {excerpt(value)} (known: {listed or 'none'})"
