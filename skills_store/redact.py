"""Secret redaction: everything is passed through a `Redactor` before it is stored.

Each match is replaced by `[REDACTED:<kind>]`. Three families of rules run in order:

1. well-known credential formats (provider prefixes: OpenAI, Anthropic, AWS, GitHub, Slack, Google, Stripe, ...),
   private-key blocks and JWTs;
2. secrets named by their context: passwords in URLs, `Authorization` headers, `KEY=value` lines of env files
   and `password: "..."` assignments whose name says it holds a secret, and dict fields with such names;
3. high-entropy tokens: long mixed-case alphanumeric runs that look random. Hex digests, UUIDs, identifiers,
   paths, `sha512-...` integrity strings and base64 that decodes to text are left alone.

Extra regular expressions (from settings) are applied first; a named group `secret` limits the replacement to
that group, otherwise the whole match is replaced.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from skills_store.errors import ConfigError

MARKER = "[REDACTED:{kind}]"

#: A name that says its value is a secret (env var, dict key, YAML key, keyword argument).
SECRET_NAME = (
    r"[A-Za-z0-9_.\-]*(?:secret|token(?!s|iz|_?count|_?type|_?len|_?ids?\b)|passw(?:or)?d|passwd|pass(?![a-z])|pwd|api[_\-]?key|"
    r"apikey|access[_\-]?key|private[_\-]?key|auth[_\-]?key|credentials?|signing[_\-]?key|encryption[_\-]?key|"
    r"session[_\-]?key|client[_\-]?secret|dsn)[A-Za-z0-9_.\-]*"
)
_SECRET_NAME_RE = re.compile(rf"^{SECRET_NAME}$", re.IGNORECASE)
#: Values that are placeholders, references or code rather than secrets.
_NOT_A_VALUE_RE = re.compile(
    r"^(?:|none|null|nil|true|false|undefined|\*+|x{3,}|\.{3}|<[^>]*>|\$\{?[A-Za-z_][\w.]*\}?|\{\{.*\}\}|%\(?\w*\)?s|"
    r"pass|password|passwd|secret|changeme|example|placeholder|your[_\-]?\w*|my[_\-]?\w*)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Rule:
    """One redaction rule: replace `group` of every match of `pattern` by the marker of `kind`."""

    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0
    needles: tuple[str, ...] = ()
    """Cheap pre-check: the rule only runs when one of these substrings occurs (lower-cased text)."""
    check: Callable[[re.Match[str]], bool] | None = None
    """Extra test on the match; a match it rejects is left as it is."""


def _plain(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value


def _value_ok(value: str) -> bool:
    """Not a placeholder, a reference to another variable, a boolean or a number."""
    value = _plain(value)
    return not (_NOT_A_VALUE_RE.match(value) or _MASKED_RE.fullmatch(value) or value.replace(".", "").isdigit())


def _secretish(value: str) -> bool:
    """A value that could be a password or key: no spaces, and either long or not a plain lowercase word."""
    value = _plain(value)
    if not _value_ok(value) or len(value) < 6 or any(c.isspace() for c in value):
        return False
    return len(value) >= 16 or not (value.isalpha() and (value.islower() or value.isupper()))


_CODE_LIKE_RE = re.compile(r"[A-Za-z_][A-Za-z_.]*(?:\[.*\]|\(.*\))?,?")
_MASKED_RE = re.compile(r"[*xX#./\- ]+")


def _yaml_value_ok(value: str) -> bool:
    """A YAML/annotation value that is a secret, not a type or an expression (`token: object,`, `Token: Style()`)."""
    return _secretish(value) and not _CODE_LIKE_RE.fullmatch(_plain(value))


def _url_password_ok(value: str) -> bool:
    return _value_ok(value) and len(_plain(value)) >= 4


def _group_ok(test: Callable[[str], bool], group: str = "s") -> Callable[[re.Match[str]], bool]:
    return lambda m: test(m[group])


def _env_ok(match: re.Match[str]) -> bool:
    return bool(_SECRET_NAME_RE.match(match["name"])) and _value_ok(match["s"])


def _rule(kind: str, pattern: str, *needles: str, group: int | str = 0, flags: int = 0, check=None) -> Rule:
    return Rule(kind, re.compile(pattern, flags), group, tuple(n.lower() for n in needles), check)


_B64 = r"A-Za-z0-9_\-"
RULES: tuple[Rule, ...] = (
    _rule(
        "private-key",
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END \1PRIVATE KEY(?: BLOCK)?-----|\Z)",
        "private key",
        flags=re.DOTALL,
    ),
    _rule("anthropic-key", rf"\bsk-ant-[a-z]+\d*-[{_B64}]{{20,}}", "sk-ant-"),
    _rule("openai-key", rf"\bsk-(?:proj-|svcacct-|admin-|None-)?(?=[{_B64}]*\d)[{_B64}]{{20,}}", "sk-"),
    _rule(
        "aws-access-key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}\b",
        "akia",
        "asia",
        "abia",
        "acca",
        "agpa",
        "aida",
        "aipa",
        "anpa",
        "anva",
        "aroa",
        "apka",
        "asca",
    ),
    _rule(
        "aws-secret-key",
        r"(?i:aws)[\w.\-]{0,30}?(?i:secret|key)[\w.\-]{0,20}[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        "aws",
        group="s",
    ),
    _rule(
        "github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})\b", "gh", "github_pat_"
    ),
    _rule("gitlab-token", r"\bgl(?:pat|dt|rt|ptt)-[A-Za-z0-9_\-]{20,}", "gl"),
    _rule("slack-token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}", "xox"),
    _rule(
        "slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+", "hooks.slack"
    ),
    _rule("google-api-key", rf"\bAIza[{_B64}]{{35}}", "aiza"),
    _rule(
        "google-oauth",
        rf"\b(?:ya29\.[{_B64}]{{20,}}|GOCSPX-[{_B64}]{{20,}}|1//0[{_B64}]{{30,}})",
        "ya29.",
        "gocspx-",
        "1//0",
    ),
    _rule("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", "_live_", "_test_"),
    _rule("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}", "hf_"),
    _rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", "npm_"),
    _rule("pypi-token", rf"\bpypi-AgE[{_B64}]{{50,}}", "pypi-"),
    _rule("jwt", rf"\beyJ[{_B64}]{{8,}}\.eyJ[{_B64}]{{8,}}\.[{_B64}]*", "eyj"),
    _rule(
        "url-password",
        r"\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@\"'<>]{1,128}:(?P<s>[^\s@/\"'<>]{1,256})@",
        "://",
        group="s",
        flags=re.IGNORECASE,
        check=_group_ok(_url_password_ok),
    ),
    _rule(
        "auth-header",
        r"(?i:\b(?:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|bot)\s+|\bbearer\s+)"
        r"(?P<s>[A-Za-z0-9._~+/\-]{8,}=*)",
        "bearer",
        "authorization",
        group="s",
        check=_group_ok(_secretish),
    ),
    _rule(
        "env-secret",
        r"^[ \t]*(?:export[ \t]+)?(?P<name>[A-Z][A-Z0-9_]*)="
        r"(?P<s>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'#][^\n#]*?)[ \t]*(?:#.*)?$",
        "=",
        group="s",
        flags=re.MULTILINE,
        check=_env_ok,
    ),
    _rule(
        "assignment-secret",
        rf"(?i:\b{SECRET_NAME})[\"']?\s*(?::=|=|:|=>)\s*(?P<q>[\"'])(?P<s>(?:(?!(?P=q)).){{1,512}}?)(?P=q)",
        "secret",
        "token",
        "pass",
        "pwd",
        "key",
        "credential",
        "dsn",
        group="s",
        check=_group_ok(_secretish),
    ),
    _rule(
        "cli-secret",
        r"(?i:--(?:password|passwd|token|api-key|apikey|secret|client-secret|access-key))(?:=|\s+)(?P<s>[^\s\"'-][^\s\"']*)",
        "--",
        group="s",
        check=_group_ok(_secretish),
    ),
    _rule(
        "yaml-secret",
        rf"^[ \t]*-?[ \t]*(?i:{SECRET_NAME})[ \t]*:[ \t]+(?P<s>[^\s\"'#|>&*!\[{{][^\s]*)[ \t]*$",
        ":",
        group="s",
        flags=re.MULTILINE,
        check=_group_ok(_yaml_value_ok),
    ),
)

_TOKEN_RE = re.compile(r"(?<![A-Za-z0-9_+/\-])[A-Za-z0-9_+/\-]{20,}={0,2}(?![A-Za-z0-9_+/=\-])")
_HEX_RE = re.compile(r"^[0-9a-fA-F\-]+$")
_WORD_RE = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}")
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
    if not (any(c.isdigit() for c in core) and any(c.isupper() for c in core) and any(c.islower() for c in core)):
        return False
    if "/" in core and all(len(part) < 24 for part in core.split("/")) and core.count("/") >= 2:
        return False  # a path
    words = sum(len(m) for m in _WORD_RE.findall(core))
    if words / len(core) > 0.45:
        return False  # an identifier made of words
    threshold = 4.0 if len(core) < 32 else 4.3
    if shannon_entropy(core) < threshold:
        return False
    return not _decodes_to_text(core)


class Redactor:
    """Replaces secrets in texts and in nested JSON-like values by `[REDACTED:<kind>]`.

    `extra_patterns` are regular expressions (from `SKILLBANK_REDACT_PATTERNS`); an invalid one raises
    `ConfigError` naming it. Instances are immutable and safe to share between threads.
    """

    def __init__(self, extra_patterns: Iterable[str] = (), *, entropy: bool = True) -> None:
        extra: list[Rule] = []
        for i, source in enumerate(extra_patterns):
            try:
                pattern = re.compile(source)
            except re.error as exc:
                raise ConfigError(
                    f"redact pattern #{i + 1} {source!r} is not a valid regular expression ({exc}); fix or remove it"
                ) from None
            group: int | str = "secret" if "secret" in pattern.groupindex else 0
            extra.append(Rule("custom", pattern, group))
        self._rules = (*extra, *RULES)
        self._entropy = entropy

    def redact_text(self, text: str) -> str:
        """The text with every secret replaced by its marker."""
        if not text:
            return text
        lowered = text.lower()
        for rule in self._rules:
            if rule.needles and not any(n in lowered for n in rule.needles):
                continue
            text = rule.pattern.sub(functools.partial(_replace, rule=rule), text)
        if self._entropy:
            text = _TOKEN_RE.sub(lambda m: MARKER.format(kind="high-entropy") if looks_random(m[0]) else m[0], text)
        return text

    def redact(self, value: Any) -> Any:
        """A copy of `value` (str, dict, list, tuple, scalars) with every string redacted.

        A dict entry whose key names a secret (`password`, `api_key`, `GITHUB_TOKEN`...) has its whole
        string value replaced.
        """
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                if isinstance(key, str) and isinstance(item, str) and _SECRET_NAME_RE.match(key) and _secretish(item):
                    out[key] = MARKER.format(kind="secret-field")
                else:
                    out[key] = self.redact(item)
            return out
        if isinstance(value, list | tuple):
            return [self.redact(item) for item in value]
        if hasattr(value, "model_dump"):
            return self.redact(value.model_dump(mode="json"))
        return value


def _replace(match: re.Match[str], rule: Rule) -> str:
    secret = match.group(rule.group)
    if secret is None or (rule.check is not None and not rule.check(match)):
        return match[0]
    marker = MARKER.format(kind=rule.kind)
    if rule.group == 0:
        return marker
    start, end = match.span(rule.group)
    base = match.start()
    whole = match[0]
    return whole[: start - base] + marker + whole[end - base :]
