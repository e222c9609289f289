"""Credentials known by their format: a provider's prefix and body (`ghp_` + 36), also shortened by an elision.

Part of the rules of `skills_store.redact` (`redact_rules` adds the rules that find secrets by their name or their
randomness). Every format starts at a literal prefix, so the regex engine skips the text between candidates at C
speed; none requires a word boundary before it: agents glue tokens to letters (`xghp_...`) and escaped text puts
an `n` or a `D` before them (`\\nghp_...`, `%3Dghp_...`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One redaction rule: replace `group` of every match of `pattern` by the marker of `kind`."""

    kind: str | None
    """None: the kind is the name of the named group that matched (`aws_access_key` -> `aws-access-key`)."""
    pattern: re.Pattern[str]
    group: int | str = 0
    needles: tuple[str, ...] = ()
    """Every match contains one of these (lower-cased): a short text without any skips the rule, and a windowed
    rule runs only around them."""
    check: Callable[[re.Match[str]], bool] | None = None
    """Extra test on the match; a match it rejects is left as it is."""
    windowed: bool = False
    """Run over windows of the text around the needles instead of the whole text: rules that start with a
    case-insensitive name cannot use the regex engine's fast literal scan, so they only see where a name is."""


_ASCII_DIGIT_RE = re.compile(r"[0-9]")
_ASCII_UPPER_RE = re.compile(r"[A-Z]")
_ASCII_LOWER_RE = re.compile(r"[a-z]")


def _mixed(text: str) -> bool:
    """A digit, an upper-case and a lower-case letter, all three. ASCII text (every token `TOKEN_RE` finds) is
    searched in C: for ASCII, `isdigit`/`isupper`/`islower` are exactly these classes, and a path or a word in
    lower case, the common token, was scanned whole by a Python generator (3.5 us of a path's 9.5)."""
    if text.isascii():
        return bool(_ASCII_DIGIT_RE.search(text) and _ASCII_UPPER_RE.search(text) and _ASCII_LOWER_RE.search(text))
    return any(c.isdigit() for c in text) and any(c.isupper() for c in text) and any(c.islower() for c in text)


def _provider_ok(match: re.Match[str]) -> bool:
    """Prefixes that also occur inside words (`sk-`, `hf_`, `ASIA`) need a random body when glued to a letter."""
    start = match.start()
    glued = start > 0 and match.string[start - 1].isalnum()
    kind, token = match.lastgroup, match[0]
    if not glued or kind not in ("openai_key", "huggingface_token", "aws_access_key"):
        return True
    if kind == "aws_access_key":
        return any(c.isdigit() for c in token[4:])
    return len(token) >= 32 and _mixed(token)


def _rule(
    kind: str | None,
    pattern: str,
    *needles: str,
    group: int | str = 0,
    flags: int = 0,
    check=None,
    windowed: bool = False,
) -> Rule:
    return Rule(kind, re.compile(pattern, flags), group, tuple(n.lower() for n in needles), check, windowed)


_B64 = r"A-Za-z0-9_\-"
_AWS_IDS = "AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA"
#: Well-known credential formats; the group name is the kind. One regex each: a literal prefix lets the regex
#: engine jump from candidate to candidate, which an alternation of them all would not (20x slower).
PROVIDERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (rf"(?P<anthropic_key>sk-ant-[a-z]{{1,16}}\d{{0,4}}-[{_B64}]{{20,512}})", ("sk-ant-",)),
    (rf"(?P<openai_key>sk-(?:proj-|svcacct-|admin-|None-)?(?=[{_B64}]{{0,512}}\d)[{_B64}]{{20,512}})", ("sk-",)),
    (rf"(?P<aws_access_key>(?:{_AWS_IDS})[A-Z0-9]{{16}}(?![A-Za-z0-9]))", tuple(_AWS_IDS.split("|"))),
    (r"(?P<github_token>gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})", ("gh", "github_pat_")),
    (r"(?P<gitlab_token>gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_\-]{20,512})", ("gl",)),
    (r"(?P<slack_token>xox[abposre]-[A-Za-z0-9\-]{10,512})", ("xox",)),
    (r"(?P<slack_webhook>https://hooks\.slack\.com/(?:services|workflows|triggers)/[\w/\-]{1,512})", ("hooks.",)),
    (rf"(?P<google_api_key>AIza[{_B64}]{{35}})", ("aiza",)),
    (
        rf"(?P<google_oauth>ya29\.[{_B64}]{{20,512}}|GOCSPX-[{_B64}]{{20,512}}|1//0[{_B64}]{{30,512}})",
        ("ya29.", "gocspx-", "1//0"),
    ),
    (r"(?P<stripe_key>(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,512})", ("_live_", "_test_")),
    (r"(?P<huggingface_token>hf_[A-Za-z0-9]{30,512})", ("hf_",)),
    (r"(?P<npm_token>npm_[A-Za-z0-9]{36}(?![A-Za-z0-9]))", ("npm_",)),
    (  # STS session tokens: base64 of a header naming the region (`origin_ec`) or `aws`, then 100s of characters
        r"(?P<aws_session_token>(?:IQoJb3JpZ2luX2Vj|F[wQ]oGZXIvYXdz)[A-Za-z0-9/+]{60,4096}={0,2})",
        ("IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdz", "FQoGZXIvYXdz"),
    ),
    (rf"(?P<pypi_token>pypi-AgE[{_B64}]{{50,1024}})", ("pypi-",)),
    (rf"(?P<jwt>eyJ[{_B64}]{{8,512}}\.eyJ[{_B64}]{{8,8192}}\.[{_B64}]{{0,1024}})", ("eyj",)),
)

PRIVATE_KEY = _rule(
    "private-key",
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END \1PRIVATE KEY(?: BLOCK)?-----|\Z)",
    "private key",
    flags=re.DOTALL,
)
#: The same formats shortened by an elision, as pytest prints a long string in an assertion
#: (`'ghp_Q7wErTy8...LzXcVbNm1234A'`): the prefix, what is left of the body, `...` or `…`, and the tail after it.
#: Half a key is still a leak, and the prefix names the service. kind -> (prefixes, body characters). A format
#: with one prefix gets the elided form as the first alternative after its prefix (no extra scan of the text);
#: one with several (`gh[pousr]_` and `github_pat_`) gets a rule per prefix, each starting with a literal.
ELIDED: dict[str, tuple[tuple[str, ...], str]] = {
    "anthropic_key": ((r"sk-ant-[a-z]{1,16}\d{0,4}-",), _B64),
    "openai_key": ((r"sk-(?:proj-|svcacct-|admin-|None-)?",), _B64),
    "github_token": ((r"gh[pousr]_", r"github_pat_"), "A-Za-z0-9_"),
    "gitlab_token": ((r"gl(?:pat|dt|rt|ptt)-",), r"A-Za-z0-9_\-"),
    "slack_token": ((r"xox[abposre]-",), r"A-Za-z0-9\-"),
    "google_api_key": ((r"AIza",), _B64),
    "google_oauth": ((r"ya29\.", r"GOCSPX-"), _B64),
    "stripe_key": ((r"(?:sk|rk|pk)_(?:live|test)_",), "A-Za-z0-9"),
    "huggingface_token": ((r"hf_",), "A-Za-z0-9"),
    "npm_token": ((r"npm_",), "A-Za-z0-9"),
    "pypi_token": ((r"pypi-AgE",), _B64),
}
_MASK_CHARS = frozenset("xX*#")


def _elided_ok(match: re.Match[str]) -> bool:
    """An elided key keeps enough of itself to leak: 6 characters or more around the elision, random-looking (two
    of digits, upper and lower case: `hf_token...` is a word, not a key), not a mask (`ghp_xxxx...`); a bare
    prefix with an elision (`sk-proj-...`, how docs write a key) is left alone."""
    if len(match["head"]) >= 16:  # as much as the full forms ask for: judged like them (`sk-1234...` included)
        return _provider_ok(match)
    left = match["head"] + match["tail"]
    if len(left) < 6 or set(left) <= _MASK_CHARS:
        return False
    classes = sum(bool(r.search(left)) for r in (_ASCII_DIGIT_RE, _ASCII_UPPER_RE, _ASCII_LOWER_RE))
    if classes < 2:
        return False
    start = match.start()
    glued = start > 0 and match.string[start - 1].isalnum()
    # `sk-`/`hf_` glued to a letter (`risk-Ab12...`) is a word more often than a key: it needs more of the key.
    return not glued or match.lastgroup not in ("openai_key", "huggingface_token") or (len(left) >= 16 and _mixed(left))


def _format_ok(match: re.Match[str]) -> bool:
    return _provider_ok(match) if match.groupdict().get("tail") is None else _elided_ok(match)


def _elision(chars: str) -> str:
    return rf"(?P<head>[{chars}]{{0,512}})(?:\.\.\.|\u2026)(?P<tail>[{chars}]{{0,512}})"


def _format_rules(pattern: str, needles: tuple[str, ...]) -> list[Rule]:
    """The rule of a format, with its elided form: merged after the one prefix (tried first: a full key followed
    by `...` is then taken with its tail), else as rules of their own. The outer group closes last, so
    `match.lastgroup` stays the kind."""
    kind = pattern[len("(?P<") : pattern.index(">")]
    if kind not in ELIDED:
        return [_rule(None, pattern, *needles, check=_provider_ok)]
    prefixes, chars = ELIDED[kind]
    full = pattern[len(f"(?P<{kind}>") : -1]
    rest = full[len(prefixes[0]) :]
    if len(prefixes) == 1 and full.startswith(prefixes[0]) and "|" not in rest:
        merged = f"(?P<{kind}>{prefixes[0]}(?:{_elision(chars)}|{rest}))"
        return [_rule(None, merged, *needles, check=_format_ok)]
    own = [_rule(None, f"(?P<{kind}>{p}{_elision(chars)})", *needles, check=_elided_ok) for p in prefixes]
    return [*own, _rule(None, pattern, *needles, check=_provider_ok)]


#: pytest then diffs the two strings past their common head or tail (`Skipping 37 identical leading characters in
#: diff`), in lines such as `- 0GfEdCbA9876` / `+ 0GfEdCbA987`: a piece of the key, without its prefix when the
#: head was skipped. Such a line is redacted when an elided key stands shortly before its `Skipping` line (the
#: same assertion message).
_ELIDED_KEY_RE = re.compile(
    "(?:"
    + "|".join(p for prefixes, _ in ELIDED.values() for p in prefixes)
    + r")[A-Za-z0-9_\-]{0,512}(?:\.\.\.|\u2026)"
)
_SKIPPING = ("identical leading characters in diff", "identical trailing characters in diff")


def _diff_piece_ok(match: re.Match[str]) -> bool:
    text, start = match.string, match.start()
    skipping = max(text.rfind(s, max(0, start - 400), start) for s in _SKIPPING)
    if skipping < 0 or "\n\n" in text[skipping:start]:
        return False
    return bool(_ELIDED_KEY_RE.search(text, max(0, skipping - 1500), skipping))


DIFF_PIECE = _rule(
    "key-piece",
    r"^(?:E[ \t]+)?[ \t]*[-+] (?P<s>[A-Za-z0-9_\-]{4,512})[ \t]*$",
    *_SKIPPING,
    group="s",
    flags=re.MULTILINE,
    check=_diff_piece_ok,
)
PROVIDER_RULES: tuple[Rule, ...] = (
    PRIVATE_KEY,
    *(r for p, n in PROVIDERS for r in _format_rules(p, n)),
    DIFF_PIECE,
)
