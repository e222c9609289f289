"""The randomness test of `skills_store.redact`: which long tokens look like keys rather than names, digests or paths.

A token is random when it is long, mixes digits with upper- and lower-case letters, is not made of words, has a
high entropy and is not base64 of text. Paths mix the same characters: `org/Repo/blob/<sha>/src/x`,
`/var/folders/4q/<random lower case>/T`. But base64 keys hold `/` too (one 40-character key in seven holds two or
more), so a path is told from a key by its parts, not by its slashes alone (`path_like`).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

from skills_store.redact_formats import _mixed

TOKEN_RE = re.compile(r"(?<![A-Za-z0-9_+/\-])[A-Za-z0-9_+/\-]{20,}={0,2}(?![A-Za-z0-9_+/=\-])")
WORD_RE = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}")
VOWEL_RE = re.compile(r"[aeiouAEIOU]")
HEX_RE = re.compile(r"^[0-9a-fA-F\-]+$")
_HASH_PREFIXES = ("sha1-", "sha224-", "sha256-", "sha384-", "sha512-", "md5-")
#: The standard base64 alphabet, the one keys with `/` are written in (`-` and `_` are paths' and url-safe keys').
_BASE64_RE = re.compile(r"[A-Za-z0-9+/]+")
#: A lower-case word between two slashes (`blob`, `uploads`, `var`): a path's, seldom a random key's.
_LOWER_WORD_RE = re.compile(r"[a-z]*[aeiou][a-z]*")


def shannon_entropy(text: str) -> float:
    """Bits per character of the text's own character distribution."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def word_share(text: str) -> float:
    """How much of the text is words (runs of letters with a vowel: `get`, `User`, `HTTP`)."""
    return sum(len(m) for m in WORD_RE.findall(text) if VOWEL_RE.search(m)) / len(text) if text else 0.0


def decodes_to_text(token: str) -> bool:
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


def _random_body(core: str) -> bool:
    """Mixed, not words, of a high entropy and not base64 of text."""
    if not _mixed(core) or word_share(core) > 0.45:
        return False  # an identifier made of words
    threshold = 4.0 if len(core) < 32 else 4.3
    return shannon_entropy(core) >= threshold and not decodes_to_text(core)


def path_like(core: str) -> bool:
    """A token with two or more `/` that is a path: its parts short, hex (commits) or in one case (temp dirs).

    In the base64 alphabet (no `-` or `_`, which keys with `/` never hold) such parts are not enough: a random key
    has them too. It is then a path with no `+` and either a lower-case word between its slashes or, its hex parts
    left out, no random rest (`com/SeanLee97/AnglE/blob/<sha>/loss`)."""
    parts = core.split("/")
    if not all(len(part) < 24 or HEX_RE.match(part) or not _mixed(part) for part in parts):
        return False
    if not _BASE64_RE.fullmatch(core):
        return True
    if "+" in core:
        return False
    if any(len(part) >= 3 and _LOWER_WORD_RE.fullmatch(part) for part in parts):
        return True
    rest = "".join(part for part in parts if not HEX_RE.match(part))
    return len(rest) < 12 or not _random_body(rest)


def looks_random(token: str) -> bool:
    """The high-entropy test: long, mixed upper/lower/digit, random-looking, and none of the known harmless shapes."""
    core = token.rstrip("=")
    if not 20 <= len(core) <= 256 or core.lower().startswith(_HASH_PREFIXES) or HEX_RE.match(core):
        return False
    if not _mixed(core) or (core.count("/") >= 2 and path_like(core)):
        return False
    return _random_body(core)
