"""Secret redaction: everything is passed through a `Redactor` before it is stored.

Each secret is replaced by `[REDACTED:<kind>]`. The rules (`skills_store.redact_rules`), in priority order:

1. well-known credential formats (provider prefixes: OpenAI, Anthropic, AWS, GitHub, Slack, Google, Stripe, ...),
   private-key blocks and JWTs, wherever they stand, glued to letters included;
2. secrets named by their context: passwords in URLs (with a user or without: `redis://:pw@`) and URL query
   parameters, `Authorization` headers, `KEY=value` anywhere in a line (after `+`/`-` of a diff, `export`, spaces),
   `password: ...` YAML, `"password": "..."` assignments, `--token X` and mysql's `-pX` options, dict fields whose
   name says they hold a secret, and AWS secret keys beside their access key id (`redact_aws`);
3. high-entropy tokens: long mixed-case alphanumeric runs that look random. Hex digests, UUIDs, identifiers,
   paths, `sha512-...` integrity strings and base64 that decodes to text are left alone; the slashes of a base64
   key do not make it a path (`redact_random`).

Agents stringify tool output: a token after `\\n`, `\\t` or `\\"` of JSON text (escaped once or twice), after
`%3D` of a URL, or inside `\\u0041`-escapes, is hidden from rules that look for a line start or a quote. So each
line holding such escapes is also decoded into a *view*, the rules run over the view too, and what they find is
mapped back to the original characters. Only those lines are decoded, which keeps big diffs fast.

Extra regular expressions (from settings) are applied first; a named group `secret` limits the replacement to
that group, otherwise the whole match is replaced.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from skills_store.errors import ConfigError
from skills_store.redact_rules import RULES, SECRET_NAME_RE, TOKEN_RE, Rule, looks_random, secretish, shannon_entropy

__all__ = ["MARKER", "Redactor", "looks_random", "shannon_entropy"]

MARKER = "[REDACTED:{kind}]"
#: Backslash escapes (any depth: `\n`, `\\n`, `\\\"`), `\uXXXX`, and URL escapes (`%3D`, double-encoded `%253D`).
#: The run of backslashes is matched from its first one (the lookbehind after it rejects every later one, which keeps a
#: long run linear), and starting at a literal lets the regex engine skip to the next `\\` or `%` at C speed.
ESCAPE_RE = re.compile(r"\\(?<!\\\\)\\*(?:[ntrbf\"'/]|u[0-9a-fA-F]{4})|%(?:25)*[0-9A-F]{2}")
_BACKSLASH = {"n": "\n", "t": "\t", "r": "\r", "b": " ", "f": " "}
#: How far around a name a windowed rule looks (within the name's line): names are short, values up to 1 KB.
BEFORE, AFTER = 256, 1280
#: Texts up to this size are scanned whole by every rule whose needle they contain: cheaper than windows.
SMALL = 4096
#: An escaped line longer than this (a stringified tool output) is left to its decoded view for the windowed rules:
#: its own windows would cover most of it, since it is all one line.
LONG_LINE = 4096
#: See `Redactor._gated`.
GATED_NEEDLES = 3
#: Dict keys up to this long found to hold no secret are remembered (at most `PLAIN_KEYS` of them; `Redactor._key`).
PLAIN_KEY_CHARS, PLAIN_KEYS = 128, 4096
Span = tuple[int, int, str]
_HEX2 = re.compile(r"[0-9A-F]{2}")


def _decode(escape: str) -> str:
    if escape[0] == "%":
        return chr(int(escape[-2:], 16))
    code = escape.lstrip("\\")
    if code[0] == "u":
        char = chr(int(code[1:], 16))
        return char if char.isprintable() or char in "\n\t" else " "
    return _BACKSLASH.get(code, code)


class View:
    """Pieces of a text (optionally with their escapes decoded) joined by newlines, with a map back to the text.

    `starts[i]` is the offset in the original text where the view's character `i` came from; every original
    character of a piece belongs to exactly one view character, so `starts[b]` is also where a span ending at
    `b` ends. The joining newlines are at `breaks`; a span is never mapped across one.
    """

    def __init__(self, text: str, ranges: Iterable[tuple[int, int]], *, decode: bool = False) -> None:
        pieces: list[str] = []
        self.starts: list[int] = []
        self.breaks: list[int] = []
        for start, end in ranges:
            pos = start
            for esc in ESCAPE_RE.finditer(text, start, end) if decode else ():
                pieces += [text[pos : esc.start()], _decode(esc[0])]
                self.starts.extend(range(pos, esc.start() + 1))
                pos = esc.end()
            pieces.append(text[pos:end] + "\n")
            self.starts.extend(range(pos, end + 1))
            self.breaks.append(len(self.starts) - 1)
        self.text = "".join(pieces)
        self.starts.append(self.starts[-1] if self.starts else 0)

    def to_original(self, spans: Iterable[Span]) -> list[Span]:
        """View spans as spans of the original text, split at the joins."""
        out = []
        for start, end, kind in spans:
            first = bisect.bisect_left(self.breaks, start)
            while start < end:
                stop = min(end, self.breaks[first]) if first < len(self.breaks) else end
                if stop > start:
                    out.append((self.starts[start], self.starts[stop], kind))
                start, first = stop + 1, first + 1
        return out


def escaped_lines(text: str) -> list[tuple[int, int]]:
    """The (start, end) of every line that holds an escape sequence."""
    lines: list[tuple[int, int]] = []
    end = -1
    for found in ESCAPE_RE.finditer(text):
        if found.start() < end:
            continue
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.end())
        end = len(text) if end < 0 else end
        lines.append((start, end))
    return lines


def windows(text: str, lowered: str, needles: Iterable[str]) -> list[tuple[int, int]]:
    """Merged windows around every needle of the lower-cased text, each within its line."""
    found: list[tuple[int, int]] = []
    for needle in needles:
        hit = lowered.find(needle)
        while hit >= 0:
            line_start = text.rfind("\n", max(0, hit - BEFORE), hit) + 1
            line_end = text.find("\n", hit, hit + AFTER)
            found.append((max(line_start, hit - BEFORE), line_end if line_end >= 0 else min(len(text), hit + AFTER)))
            hit = lowered.find(needle, hit + len(needle))
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _outside(ranges: list[tuple[int, int]], skip: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ranges that do not start inside one of the sorted `skip` ranges."""
    if not skip:
        return ranges
    starts = [s for s, _ in skip]
    out = []
    for start, end in ranges:
        i = bisect.bisect_right(starts, start) - 1
        if i < 0 or start >= skip[i][1]:
            out.append((start, end))
    return out


def _trimmed(text: str, start: int) -> int:
    """Where a token found glued to an escape really starts: after the `n` of `\\n`, the `3D` of `%3D`."""
    if start >= 1 and text[start - 1] == "\\" and text[start] in "ntrbf":
        return start + 1
    if start >= 1 and text[start - 1] == "%" and _HEX2.match(text, start):
        return start + 2
    return start


class Redactor:
    """Replaces secrets in texts and in nested JSON-like values by `[REDACTED:<kind>]`.

    `extra_patterns` are regular expressions (from `SKILLBANK_REDACT_PATTERNS`); an invalid one raises
    `ConfigError` naming it. Instances are safe to share between threads: their rules never change, and their one
    state, a bounded set of dict keys found clean, changes only by atomic set operations.
    """

    def __init__(
        self, extra_patterns: Iterable[str] = (), *, entropy: bool = True, rules: tuple[Rule, ...] = RULES
    ) -> None:
        patterns = list(extra_patterns)
        extra: list[Rule] = []
        for i, source in enumerate(patterns):
            try:
                pattern = re.compile(source)
            except re.error as exc:
                raise ConfigError(
                    f"redact pattern #{i + 1} {source!r} is not a valid regular expression ({exc}); fix or remove it"
                ) from None
            group: int | str = "secret" if "secret" in pattern.groupindex else 0
            extra.append(Rule("custom", pattern, group))
        every = (*extra, *rules)
        self._rules = tuple(r for r in every if not r.windowed)
        #: The rules worth a look for their needles before a long text is scanned: a rule with many needles (AWS's
        #: twelve key prefixes) costs less to run than to look for each of them.
        self._gated = frozenset(r for r in self._rules if 0 < len(r.needles) <= GATED_NEEDLES)
        self._windowed = tuple(r for r in every if r.windowed)
        #: What a short text in which no needle occurs is scanned with (most short strings: paths, names, flags).
        self._needleless = tuple(r for r in (*self._rules, *self._windowed) if not r.needles)
        self._needles = tuple(dict.fromkeys(n for r in self._windowed for n in r.needles))
        every_needle = sorted({n for r in every for n in r.needles}, key=len, reverse=True)
        self._needle_re = re.compile("|".join(map(re.escape, every_needle))) if every_needle else None
        #: A needle found also stands for the needles inside it (`private key` holds `key`).
        self._implied = {n: frozenset(m for m in every_needle if m in n) for n in every_needle}
        self._entropy = entropy
        #: How to build this same redactor in another process (`mcp_server.redact_worker`); None for custom rules.
        self.spec: tuple[list[str], bool] | None = (patterns, entropy) if rules is RULES else None
        #: Dict keys known to hold no secret (see `_key`): the one thing that changes, a cache of a pure function.
        self._plain_keys: set[str] = set()

    def redact_text(self, text: str) -> str:
        """The text with every secret replaced by its marker."""
        if not text:
            return text
        lines = escaped_lines(text) if "\\" in text or "%" in text else []
        found, random = self._spans(text, skip=[(s, e) for s, e in lines if e - s > LONG_LINE])
        if lines:
            view = View(text, lines, decode=True)
            in_view, random_in_view = self._spans(view.text)
            found += view.to_original(in_view)
            random += view.to_original(random_in_view)
        return _apply(text, found + _not_overlapping(random, found))

    def _spans(self, text: str, skip: Sequence[tuple[int, int]] = ()) -> tuple[list[Span], list[Span]]:
        """What the rules find, and the random-looking tokens (which give way to a rule's finding)."""
        lowered = text.lower()
        if len(text) <= SMALL:  # a short text: skip the rules whose needles it lacks, scan it whole
            found_needles = set(self._needle_re.findall(lowered)) if self._needle_re else ()
            if found_needles:
                present: set[str] = set()
                for needle in found_needles:
                    present |= self._implied[needle]
                rules = [r for r in (*self._rules, *self._windowed) if not r.needles or present.intersection(r.needles)]
                spans = _run(rules, text)
            else:
                spans = _run(self._needleless, text)
        else:  # a long text: a rule runs only if one of its needles is in the text (a C-speed `in` each)
            spans = _run([r for r in self._rules if r not in self._gated or any(n in lowered for n in r.needles)], text)
        if self._windowed and len(text) > SMALL:
            if len(lowered) != len(text):  # a few characters lower-case to two: no shared offsets
                spans += _run(self._windowed, text)
            else:
                view = View(text, _outside(windows(text, lowered, self._needles), skip))
                spans += view.to_original(_run(self._windowed, view.text))
        random: list[Span] = []
        if self._entropy:
            for match in TOKEN_RE.finditer(text):
                start = _trimmed(text, match.start())
                if looks_random(text[start : match.end()]):
                    random.append((start, match.end(), "high-entropy"))
        return spans, random

    def redact(self, value: Any) -> Any:
        """A copy of `value` (str, dict, list, tuple, scalars) with every string redacted, dict keys included.

        A dict entry whose key names a secret (`password`, `api_key`, `GITHUB_TOKEN`...) has its whole
        string value replaced. A key that holds a secret is replaced the way a value is (numbered, `#2`, when two
        come out the same); a key without one is kept as it is.
        """
        return self._redact(value, {})

    def _redact(self, value: Any, seen: dict[str, str]) -> Any:
        """`redact`, with the short strings already redacted in this value (`seen`): a patch's file list repeats
        its actions, a search's hits their tags, and the same text always redacts the same way."""
        if isinstance(value, str):
            if len(value) > SMALL:
                return self.redact_text(value)
            done = seen.get(value)
            if done is None:
                done = seen[value] = self.redact_text(value)
            return done
        if isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            plain = self._plain_keys
            for key, item in value.items():
                if not isinstance(key, str):
                    out[key] = self._redact(item, seen)
                    continue
                clean = key if key in plain else self._key(key, seen)
                if clean != key:
                    clean = _unique(clean, out, value)
                if isinstance(item, str) and SECRET_NAME_RE.match(key) and secretish(item):
                    out[clean] = MARKER.format(kind="secret-field")
                else:
                    out[clean] = self._redact(item, seen)
            return out
        if isinstance(value, list | tuple):
            return [self._redact(item, seen) for item in value]
        if hasattr(value, "model_dump"):
            return self._redact(value.model_dump(mode="json"), seen)
        return value

    def _key(self, key: str, seen: dict[str, str]) -> str:
        """A dict key redacted like a value; a key with no secret in it is returned unchanged.

        Keys are mostly the same few field names, so the short ones found clean are remembered across calls in
        `_plain_keys` (`_redact` looks there first: a set lookup instead of a scan); one that held a secret is
        never remembered."""
        clean: str = self._redact(key, seen)
        if clean == key and len(key) <= PLAIN_KEY_CHARS:
            if len(self._plain_keys) >= PLAIN_KEYS:  # a bound, not an LRU: rebuilt from the keys still in use
                self._plain_keys.clear()
            self._plain_keys.add(key)
        return clean


def _unique(key: str, taken: Mapping[Any, Any], original: Mapping[Any, Any]) -> str:
    """`key`, or `key #2`, `key #3`...: two secrets of one kind redact to the same marker, and no entry may
    overwrite another (one already redacted, or a key of the original dict, kept as it is)."""
    candidate, n = key, 1
    while candidate in taken or candidate in original:
        n += 1
        candidate = f"{key} #{n}"
    return candidate


def _run(rules: Iterable[Rule], text: str) -> list[Span]:
    spans: list[Span] = []
    for rule in rules:
        for match in rule.pattern.finditer(text):
            if match.group(rule.group) is None or (rule.check is not None and not rule.check(match)):
                continue
            start, end = match.span(rule.group)
            if end > start:
                spans.append((start, end, rule.kind or (match.lastgroup or "secret").replace("_", "-")))
    return spans


def _not_overlapping(spans: list[Span], others: list[Span]) -> list[Span]:
    if not others or not spans:
        return spans
    ordered = sorted(others)
    starts = [s for s, _, _ in ordered]
    reach = list(itertools.accumulate((e for _, e, _ in ordered), max))
    out = []
    for start, end, kind in spans:
        i = bisect.bisect_left(starts, end) - 1  # the others starting before this span ends
        if i < 0 or reach[i] <= start:
            out.append((start, end, kind))
    return out


def _apply(text: str, spans: list[Span]) -> str:
    """Replace the spans (overlapping ones merged; the earliest rule names the kind) by their markers."""
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    cur_start, cur_end, cur_kind = -1, -1, ""
    for start, end, kind in sorted(spans, key=lambda s: s[0]):
        if start < cur_end:
            cur_end = max(cur_end, end)
            continue
        if cur_end >= 0:
            out += [text[pos:cur_start], MARKER.format(kind=cur_kind)]
            pos = cur_end
        cur_start, cur_end, cur_kind = start, end, kind
    out += [text[pos:cur_start], MARKER.format(kind=cur_kind), text[cur_end:]]
    return "".join(out)
