"""Query analysis: what of a query (often a whole traceback or pytest log) should be embedded and keyword-matched.

A traceback is mostly noise (`File "...", line N, in f`) around two signals: the exception line(s)
(`ModuleNotFoundError: No module named 'collections'`) and the source line that raised. Embedding the whole
text would spend MiniLM's 256-token window on the noise, so both sides search on the signal. A query that is not
error output (a description in words) is used as it is.

Imports nothing heavy: the Claude Code hook uses it for its keyword-only search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sandbox.errorlines import parse_error_line

_FILE_LINE = re.compile(r'^\s*File "([^"]+)", line \d+')
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)*")
_QUOTED = re.compile(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"")

_STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if in into is it its
    me my not of on or our so than that the their then there these they this to too was we were what when where
    which while who why will with would you your after before about again also any because being both each few
    more most other same should some such only own very just now get got still keeps keep seems""".split()
)
_NOISE = frozenset(
    """traceback recent call last line file most during handling above exception another occurred direct cause
    following""".split()
)


@dataclass
class QueryParts:
    text: str
    """The query as given (stripped)."""
    error_lines: list[str] = field(default_factory=list)
    """Exception lines found (`Type: message`), most relevant (last raised) first, deduplicated."""
    code_line: str | None = None
    """The source line that raised, when the query is a traceback."""
    embed_text: str = ""
    """What the vector side embeds."""
    keywords: list[str] = field(default_factory=list)
    """Lowercase tokens for the keyword side, most important first, deduplicated."""

    @property
    def error_type(self) -> str | None:
        if not self.error_lines:
            return None
        return self.error_lines[0].split(":", 1)[0].rsplit(".", 1)[-1]


def _error_lines(lines: list[str]) -> list[str]:
    found: list[str] = []
    for raw in lines:
        # `json.decoder.JSONDecodeError: Expecting value`, `E   TypeError: ...`, `FAILED t.py::x - KeyError: 'a'`
        hit = parse_error_line(raw, inside=True)
        if hit is None:
            continue
        entry = f"{hit.qualified}: {hit.message}" if hit.message else hit.qualified
        if entry not in found:
            found.append(entry)
    # A bare type (`tests/t.py:5: AssertionError`) adds nothing when the same type appears with its message.
    with_message = {e.split(":", 1)[0] for e in found if ":" in e}
    found = [e for e in found if ":" in e or e not in with_message]
    found.reverse()  # the last raised exception is the one the agent must fix
    return found


def _code_line(lines: list[str]) -> str | None:
    for i in range(len(lines) - 1, -1, -1):
        if _FILE_LINE.match(lines[i]) and i + 1 < len(lines):
            nxt = lines[i + 1].strip()
            if nxt and not _FILE_LINE.match(lines[i + 1]) and parse_error_line(nxt, inside=True) is None:
                return nxt
    return None


def tokens(text: str) -> list[str]:
    """Lowercase keyword tokens of `text` in order of appearance, without stopwords or duplicates."""
    out: list[str] = []
    seen: set[str] = set()
    for tok in _TOKEN.findall(text):
        low = tok.lower()
        if len(low) < 2 or low in _STOPWORDS or low in _NOISE or low in seen:
            continue
        seen.add(low)
        out.append(low)
    return out


def analyze(query: str, *, max_keywords: int = 32) -> QueryParts:
    text = query.strip()
    lines = text.splitlines()
    errors = _error_lines(lines)
    code = _code_line(lines)
    parts = QueryParts(text=text, error_lines=errors[:3], code_line=code)
    if errors:
        signal = list(errors[:3])
        if code:
            signal.append(code)
        parts.embed_text = "\n".join(signal)[:2000]
        # Quoted names in the message ('collections', 'Mapping') are the most specific words there are.
        quoted = [q for pair in _QUOTED.findall(" ".join(errors[:3])) for q in pair if q]
        keyword_source = " ".join([*errors[:3], " ".join(quoted), code or ""])
    else:
        parts.embed_text = text[:2000]
        keyword_source = text[:8000]
    parts.keywords = tokens(keyword_source)[:max_keywords]
    return parts


def fts_match_expression(keywords: list[str]) -> str | None:
    """An FTS5 MATCH expression that ORs the keywords (each quoted, so no keyword is read as an operator)."""
    terms = ['"' + k.replace('"', '""') + '"' for k in keywords if k]
    return " OR ".join(terms) if terms else None
