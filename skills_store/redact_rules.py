"""The rules of `skills_store.redact`: what a secret looks like, by its format, by its name, or by its randomness.

Every rule starts at something literal (a provider prefix, `://`, a secret-ish name, `--`): the regex engine
then skips the text between candidates at C speed, which is what keeps redaction of a 10 MB patch affordable.
Rules never require a word boundary before a provider prefix: agents glue tokens to letters (`xghp_...`) and
escaped text puts an `n` or a `D` before them (`\\nghp_...`, `%3Dghp_...`).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

#: A word in a name that says its value is a secret; the text around it in the name does not matter.
SECRET_WORD = (
    r"(?:secret|token(?!s|iz|_?count|_?type|_?len|_?ids?\b)|passw(?:or)?d|passwd|pass(?![a-z])|pwd|api[_\-]?key|"
    r"apikey|access[_\-]?key|private[_\-]?key|auth[_\-]?key|credentials?|signing[_\-]?key|encryption[_\-]?key|"
    r"session[_\-]?key|client[_\-]?secret|dsn)"
)
SECRET_NAME = rf"[A-Za-z0-9_.\-]{{0,64}}{SECRET_WORD}[A-Za-z0-9_.\-]{{0,64}}"
SECRET_NAME_RE = re.compile(rf"^{SECRET_NAME}$", re.IGNORECASE)
#: Names of URL query parameters that carry credentials although they do not say "secret".
_QUERY_NAMES = re.compile(r"^(?:key|sig|signature|code|x-amz-signature|x-amz-security-token|x-goog-signature)$", re.I)
#: Names that hold where a secret is, or something about it, not the secret itself.
_ABOUT_A_SECRET = re.compile(
    r"[_.\-](?i:file|path|dir|name|id|type|len|length|count|size|ttl|timeout|url|env)$"
    r"|[a-z](?:File|Path|Dir|Name|Id|Type|Len|Length|Count|Size|Ttl|Timeout|Url|Env)$"
)
#: Values that are placeholders, references or code rather than secrets.
_NOT_A_VALUE_RE = re.compile(
    r"^(?:|none|null|nil|true|false|undefined|\*+|x{3,}|\.{3}|<[^>]*>|\$\{?[A-Za-z_][\w.]*\}?|\{\{.*\}\}|%\(?\w*\)?s|"
    r"\{[\w.\[\]'\"]*\}|pass|password|passwd|secret|changeme|example|placeholder|your[_\-]?\w*|my[_\-]?\w*)$",
    re.IGNORECASE,
)
_CODE_LIKE_RE = re.compile(r"[A-Za-z_][A-Za-z_.]*(?:\[.*\]|\(.*\))?,?")
_EXPRESSION_RE = re.compile(r"[A-Za-z_]\w*(?:\.\w+)+(?:\[.*|\(.*)?|[A-Za-z_]\w*[(\[].*")
_MASKED_RE = re.compile(r"[*xX#./\- ]+")
#: An absolute or relative path (`PWD=/home/me/app`, `token_file: ./run/secrets/t`): where a secret is, not one.
_PATH_RE = re.compile(r"(?:~|\.{1,2})?/(?:[\w.\-]+/)+[\w.\-]*")
_WORD_RE = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}")
_VOWEL_RE = re.compile(r"[aeiouAEIOU]")


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


def plain(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value


def value_ok(value: str) -> bool:
    """Not a placeholder, a reference to another variable, a boolean or a number."""
    value = plain(value)
    if _NOT_A_VALUE_RE.match(value) or _MASKED_RE.fullmatch(value) or _PATH_RE.fullmatch(value):
        return False
    return not value.replace(".", "").isdigit()


def secretish(value: str) -> bool:
    """A value that could be a password or key: no spaces, and either long or not a plain lowercase word."""
    value = plain(value)
    if not value_ok(value) or len(value) < 6 or any(c.isspace() for c in value):
        return False
    return len(value) >= 16 or not (value.isalpha() and (value.islower() or value.isupper()))


def _yaml_value_ok(value: str) -> bool:
    """A YAML/annotation value that is a secret, not a type or an expression (`token: object,`, `Token: Style()`)."""
    return secretish(value) and not _CODE_LIKE_RE.fullmatch(plain(value))


def _identifier_like(value: str) -> bool:
    """`user_pw1`, `tokenValue2`: mostly words, as code names are; random passwords are not."""
    words = sum(len(w) for w in _WORD_RE.findall(value))
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value)) and words / len(value) > 0.45


def _named_ok(match: re.Match[str]) -> bool:
    """`NAME=value` / `name: value` inside a line: a secret name, and a literal value rather than code."""
    name, value = match["name"], match["s"]
    if not SECRET_NAME_RE.match(name) or _ABOUT_A_SECRET.search(name):
        return False
    if value[0] in "\"'":
        return secretish(value)
    if len(value) >= 20 and _mixed(value) and shannon_entropy(value) >= 4.0:
        return True
    if match["sep"] == "=" and name.isupper():  # an environment variable: its value is a literal
        return secretish(value) and not _EXPRESSION_RE.fullmatch(value)
    return _yaml_value_ok(value) and not _identifier_like(value) and not _EXPRESSION_RE.fullmatch(value)


def _query_ok(match: re.Match[str]) -> bool:
    name = match["name"]
    return bool(SECRET_NAME_RE.match(name) or _QUERY_NAMES.match(name)) and secretish(match["s"])


def _env_ok(match: re.Match[str]) -> bool:
    name = match["name"]
    return bool(SECRET_NAME_RE.match(name)) and not _ABOUT_A_SECRET.search(name) and value_ok(match["s"])


def _group_ok(test: Callable[[str], bool], group: str = "s") -> Callable[[re.Match[str]], bool]:
    return lambda m: test(m[group])


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


#: Every secret name contains one of these (see SECRET_WORD).
NAME_NEEDLES = ("secret", "token", "pass", "pwd", "key", "credential", "dsn")


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

#: An unquoted value inside a line ends at white space, quotes, escapes and the punctuation around values.
_BARE = r"[^\s\"'`\\,;&|<>(){}\[\]]+"
CONTEXT_RULES: tuple[Rule, ...] = (
    _rule(
        "aws-secret-key",
        r"(?i:aws)[\w.\-]{0,30}?(?i:secret|key)[\w.\-]{0,20}[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        "aws",
        group="s",
        windowed=True,
    ),
    _rule(
        "url-password",
        r"://[^\s:/@\"'<>\\]{1,128}:(?P<s>[^\s@/\"'<>\\]{1,256})@",
        "://",
        group="s",
        check=_group_ok(lambda v: value_ok(v) and len(plain(v)) >= 4),
    ),
    _rule(
        "url-secret",
        r"[?&;](?P<name>[A-Za-z0-9_.\-]{1,64})=(?P<s>[^&#\s\"'<>\\]{1,1024})",
        "=",
        group="s",
        check=_query_ok,
    ),
    _rule(
        "auth-header",
        r"(?i:(?:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|bot)\s+|bearer\s+)"
        r"(?P<s>[A-Za-z0-9._~+/\-]{8,}=*)",
        "bearer",
        "authorization",
        group="s",
        windowed=True,
        check=_group_ok(secretish),
    ),
    _rule(
        "env-secret",
        r"^[+\-]?[ \t]*(?:export[ \t]+)?(?P<name>[A-Z][A-Z0-9_]*)="
        r"(?P<s>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'#](?:[^\n#]*[^\s#])?)[ \t]*(?:#.*)?$",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        flags=re.MULTILINE,
        check=_env_ok,
    ),
    _rule(
        "env-secret",
        rf"(?P<name>(?i:{SECRET_WORD})[A-Za-z0-9_.\-]{{0,64}})(?P<sep>=)(?P<s>{_BARE})",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        check=_named_ok,
    ),
    _rule(
        "assignment-secret",
        rf"(?i:{SECRET_WORD})[A-Za-z0-9_.\-]{{0,64}}[\"']?[ \t]{{0,8}}(?::=|=|:|=>)\s{{0,16}}"
        r"(?P<q>[\"'])(?P<s>(?:(?!(?P=q))[^\n]){1,512}?)(?P=q)",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        check=_group_ok(secretish),
    ),
    _rule(
        "cli-secret",
        r"(?i:--(?:password|passwd|token|api-key|apikey|secret|client-secret|access-key))(?:=|\s+)(?P<s>[^\s\"'-][^\s\"']*)",
        "--",
        group="s",
        check=_group_ok(secretish),
    ),
    _rule(
        "cli-secret",
        r"-(?<![\w-]-)(?:u|-user)[ =][\"']?[^\s:\"'/@]{1,128}:(?P<s>[^\s\"'@]{1,256})",
        "-u",
        group="s",
        check=_group_ok(lambda v: value_ok(v) and len(v) >= 4),
    ),
    _rule(
        "yaml-secret",
        rf"^[+\-]?[ \t]*-?[ \t]*(?i:{SECRET_NAME})[ \t]*:[ \t]+(?P<s>[^\s\"'#|>&*!\[{{][^\s]*)[ \t]*$",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        flags=re.MULTILINE,
        check=_group_ok(_yaml_value_ok),
    ),
    _rule(
        "yaml-secret",
        rf"(?P<name>(?i:{SECRET_WORD})[A-Za-z0-9_.\-]{{0,64}})[\"']?(?P<sep>:)[ \t]{{1,8}}(?P<s>{_BARE})",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        check=_named_ok,
    ),
)
RULES: tuple[Rule, ...] = (*PROVIDER_RULES, *CONTEXT_RULES)

TOKEN_RE = re.compile(r"(?<![A-Za-z0-9_+/\-])[A-Za-z0-9_+/\-]{20,}={0,2}(?![A-Za-z0-9_+/=\-])")
_HEX_RE = re.compile(r"^[0-9a-fA-F\-]+$")
_HASH_PREFIXES = ("sha1-", "sha224-", "sha256-", "sha384-", "sha512-", "md5-")


def shannon_entropy(text: str) -> float:
    """Bits per character of the text's own character distribution."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def _decodes_to_text(token: str) -> bool:
    """True when the token is base64 of mostly printable text (test data, not a credential)."""
    body = token.rstrip("=")
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return False
    if len(raw) < 8:
        return False
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    return printable / len(raw) >= 0.9


def looks_random(token: str) -> bool:
    """The high-entropy test: long, mixed upper/lower/digit, random-looking, and none of the known harmless shapes."""
    core = token.rstrip("=")
    if not 20 <= len(core) <= 256 or core.lower().startswith(_HASH_PREFIXES) or _HEX_RE.match(core):
        return False
    if core.count("/") >= 2 and all(len(part) < 24 or _HEX_RE.match(part) for part in core.split("/")):
        return False  # a path (commit hashes in it included: `org/repo/blob/<sha>/src/x.py`)
    if not _mixed(core):
        return False
    words = sum(len(m) for m in _WORD_RE.findall(core) if _VOWEL_RE.search(m))  # words have vowels
    if words / len(core) > 0.45:
        return False  # an identifier made of words
    threshold = 4.0 if len(core) < 32 else 4.3
    if shannon_entropy(core) < threshold:
        return False
    return not _decodes_to_text(core)
