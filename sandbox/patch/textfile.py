"""A text file as lines plus what must survive a rewrite: each line's ending, the BOM, the final newline.

Bytes that are not valid UTF-8 are kept through `surrogateescape`, so any text file round-trips byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

BOM = "\ufeff"
_BOM_BYTES = BOM.encode("utf-8")
LF = "\n"
CRLF = "\r\n"

_FOLD: dict[int, str] = {}
for _chars, _to in (
    ("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    ("\u2018\u2019\u201a\u201b\u2032\uff07", "'"),
    ("\u201c\u201d\u201e\u201f\u2033\uff02", '"'),
    ("\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
    ("\u200b\u200c\u200d\u2060\ufeff", ""),
):
    for _ch in _chars:
        _FOLD[ord(_ch)] = _to
_FOLD[ord("\u2026")] = "..."
#: A byte that is not UTF-8, kept by `surrogateescape` as U+DC80..U+DCFF, reads as U+FFFD to a model (a lossy
#: decoder's replacement character), the only thing it can write for it.
REPLACEMENT = "\ufffd"
for _byte in range(0x80, 0x100):
    _FOLD[0xDC00 + _byte] = REPLACEMENT
_REPLACEMENT_RUN = re.compile(REPLACEMENT + "{2,}")
_ODD_BYTE = re.compile("[\udc80-\udcff]")


MAX_QUOTED_CHARS = 200
"""How much of one line a refusal quotes: a minified file's line is a whole bundle."""


def clip(text: str, around: int = 0) -> str:
    """The line cut to `MAX_QUOTED_CHARS` characters around column `around` (where it differs), the cut parts
    replaced by `[... N characters ...]`, so a refusal never quotes a 400 KB line whole."""
    if len(text) <= MAX_QUOTED_CHARS:
        return text
    start = max(0, min(around - MAX_QUOTED_CHARS // 4, len(text) - MAX_QUOTED_CHARS))
    end = start + MAX_QUOTED_CHARS
    head = f"[... {start} characters ...]" if start else ""
    tail = f"[... {len(text) - end} characters ...]" if end < len(text) else ""
    return head + text[start:end] + tail


def first_difference(a: str, b: str) -> int:
    """The first column where two lines differ (the shorter one's length when one begins the other)."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def fold(text: str) -> str:
    """The line with surrounding whitespace removed and unicode dashes, quotes and odd spaces made ASCII; bytes that
    are not UTF-8 become U+FFFD, a run of them one (a lossy decoder shows a cut-short sequence as one)."""
    folded = text.translate(_FOLD).strip()
    return _REPLACEMENT_RUN.sub(REPLACEMENT, folded) if REPLACEMENT in folded else folded


def has_odd_bytes(text: str) -> bool:
    """Whether the line holds bytes that are not UTF-8 (kept as surrogates by `surrogateescape`)."""
    return _ODD_BYTE.search(text) is not None


class BinaryContent(ValueError):
    """The bytes are not text (they contain NUL)."""


@dataclass
class TextFile:
    lines: list[str] = field(default_factory=list)
    """Each line without its ending."""
    eols: list[str] = field(default_factory=list)
    """Each line's ending: LF or CRLF; only the last line may have none ("")."""
    bom: bool = False

    @classmethod
    def decode(cls, data: bytes) -> TextFile:
        if b"\x00" in data:
            raise BinaryContent("contains NUL bytes")
        bom = data.startswith(_BOM_BYTES)
        text = data[len(_BOM_BYTES) :].decode("utf-8", "surrogateescape") if bom else _decode(data)
        return cls(*split_lines(text), bom=bom)

    def encode(self) -> bytes:
        eols = self.eols
        if eols and eols.count(LF) + (eols[-1] == "") == len(eols):  # every ending is LF: join in C
            body = "\n".join(self.lines) + eols[-1]
        else:
            body = "".join([line + eol for line, eol in zip(self.lines, eols, strict=True)])
        data = body.encode("utf-8", "surrogateescape")
        return _BOM_BYTES + data if self.bom else data

    @property
    def ends_with_newline(self) -> bool:
        return not self.eols or self.eols[-1] != ""

    def dominant_eol(self) -> str:
        """CRLF when most line endings are CRLF, LF otherwise."""
        lf = self.eols.count(LF)  # counted by identity: the endings are this very LF (`split_lines`)
        if 2 * lf >= len(self.eols):  # at least half are LF: no need to count CRLF (compared by value, slower)
            return LF
        return CRLF if self.eols.count(CRLF) > lf else LF

    def text(self) -> str:
        """The content with LF endings and no BOM (for parsing)."""
        return "\n".join(self.lines)


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def split_lines(text: str) -> tuple[list[str], list[str]]:
    """Split text into lines and their endings (LF or CRLF; "" for a last line without one)."""
    if not text:
        return [], []
    parts = text.split("\n")
    final = parts.pop()
    if "\r" not in text:
        lines, eols = parts, [LF] * len(parts)
    else:
        lines, eols = [], []
        for part in parts:
            if part.endswith("\r"):
                lines.append(part[:-1])
                eols.append(CRLF)
            else:
                lines.append(part)
                eols.append(LF)
    if final:
        lines.append(final)
        eols.append("")
    return lines, eols
