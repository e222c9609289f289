"""Reading file names out of diff headers: git's C quoting, timestamps, `a/` `b/` prefixes and strip levels."""

from __future__ import annotations

import re

from sandbox.patch.ops import MalformedPatch, PathChoice

DEV_NULL = "/dev/null"
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_EPOCH_RE = re.compile(r"^(1970-01-01 00:00:00|1969-12-31 (1[2-9]|2[0-3]):\d\d:\d\d)(\.0+)?( [+-]\d{4})?$")
_SPACE_TIMESTAMP_RE = re.compile(r"\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?( [+-]\d{4})?$")


def unquote_c(text: str, line: int) -> tuple[str, str]:
    """Read a git C-quoted name at the start of `text`; return the name and what follows the closing quote."""
    out = bytearray()
    i = 1
    while i < len(text):
        ch = text[i]
        if ch == '"':
            return out.decode("utf-8", "surrogateescape"), text[i + 1 :]
        if ch != "\\":
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = text[i + 1 : i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif re.fullmatch(r"[0-3][0-7][0-7]", text[i + 1 : i + 4]):
            out.append(int(text[i + 1 : i + 4], 8))
            i += 4
        else:
            raise MalformedPatch(line, f"bad escape in the quoted file name {text!r}", "quote names as git does")
    raise MalformedPatch(line, f"the quoted file name {text!r} has no closing quote", "close the quote")


def shown_name(name: str) -> str:
    """`name` as a result shows it: unchanged when it is valid UTF-8, else C-quoted as git quotes it
    (`"latin\\351.txt"`), so a file name of any bytes reaches the client as text (JSON cannot carry the lone
    surrogates that `surrogateescape` decodes such bytes to)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return _quote_c(name)
    return name


def _quote_c(name: str) -> str:
    out = ['"']
    for ch in name:
        if "\udc80" <= ch <= "\udcff":  # a byte that was not UTF-8
            out.append(f"\\{ord(ch) - 0xDC00:03o}")
        elif "\ud800" <= ch <= "\udfff":
            out.extend(f"\\{byte:03o}" for byte in ch.encode("utf-8", "surrogatepass"))
        elif ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ch == "\x7f":
            short = next((key for key, code in _ESCAPES.items() if code == ord(ch)), None)
            out.append(f"\\{short}" if short else f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def header_name(rest: str, line: int) -> tuple[str, bool]:
    """The file name of a `---` or `+++` line (after the marker) and whether its timestamp is the epoch.

    A tab ends the name and everything before it is the name, trailing spaces included: git writes `+++ b/x \t`
    for a file named `x ` precisely so that the space survives (apply.c stops a name at the tab only).
    """
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        name, tail = unquote_c(rest, line)
        return name, _is_epoch(tail.strip())
    if "\t" in rest:
        name, _, stamp = rest.partition("\t")
        return name, _is_epoch(stamp.strip())
    stamp_match = _SPACE_TIMESTAMP_RE.search(rest)
    if stamp_match:
        return rest[: stamp_match.start()], _is_epoch(stamp_match.group(0).strip())
    return rest.strip(), False


def _is_epoch(stamp: str) -> bool:
    return bool(_EPOCH_RE.match(stamp))


def git_header_names(rest: str, line: int) -> tuple[str, str] | None:
    """Split the names of `diff --git <a> <b>`; None when they cannot be told apart (the `---` lines decide)."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        first, tail = unquote_c(rest, line)
        tail = tail.lstrip(" ")
        second = unquote_c(tail, line)[0] if tail.startswith('"') else tail
        return first, second
    if rest.endswith('"'):  # the quoted name is the one that closes exactly at the end (it may hold ` "` itself)
        start = rest.find(' "')
        while start >= 0:
            try:
                name, tail = unquote_c(rest[start + 1 :], line)
            except MalformedPatch:
                name, tail = "", "?"
            if not tail:
                return rest[:start], name
            start = rest.find(' "', start + 1)
        return None
    spaces = [i for i, ch in enumerate(rest) if ch == " "]
    for i in spaces:  # same name on both sides: `a/NAME b/NAME`
        left, right = rest[:i], rest[i + 1 :]
        if _strip_one(left) == _strip_one(right):
            return left, right
    index = rest.find(" b/")
    if index > 0:
        return rest[:index], rest[index + 1 :]
    return None


def _strip_one(name: str) -> str:
    return name.split("/", 1)[1] if "/" in name else name


def path_choice(
    old: str | None, new: str | None, *, git: bool, use_new: bool, prefixed: bool | None = None
) -> PathChoice:
    """The path one side of a section names, with strip levels 0 and 1 ordered by how the patch looks.

    Level 1 (drop the first directory) is preferred for git diffs with `a/` `b/` prefixes and for `diff -ruN` of two
    trees (the first directories differ); level 0 otherwise. The planner falls back to the other level when only it
    names an existing file. `prefixed` is the caller's verdict on the `a/` `b/` prefixes when it knows better than
    `old` and `new` can tell (see `git_prefixed`).
    """
    name = new if use_new else old
    assert name is not None
    if prefixed is None:
        prefixed = _has_git_prefixes(old, new)
    if git and not prefixed:
        return PathChoice(name, [name])
    level0, level1 = name, _strip_one(name) if "/" in name else None
    if level1 is None or not level1:
        return PathChoice(name, [level0])
    two_trees = bool(old and new and "/" in old and "/" in new and old.split("/")[0] != new.split("/")[0])
    prefer_one = prefixed or two_trees
    return PathChoice(name, [level1, level0] if prefer_one else [level0, level1])


def git_prefixed(names: tuple[str, str] | None, old: str | None, new: str | None) -> bool:
    """Whether a `diff --git` section's names carry `a/` `b/` prefixes, or another pair (`_prefix_pair`); else it is
    `--no-prefix` output.

    The `---` / `+++` pair decides when both lines name a file. When one of them is /dev/null, one name cannot tell
    a prefix from a directory (`git diff --no-prefix` adding `b/new.txt` writes `+++ b/new.txt`), so the two names
    of the `diff --git` line decide: git writes them as `a/...` and `b/...` exactly when it prefixes.
    """
    if names is None or (old is not None and new is not None):
        return _has_git_prefixes(old, new) or (old is not None and new is not None and _prefix_pair(old, new))
    return (names[0].startswith("a/") and names[1].startswith("b/")) or _prefix_pair(*names)


def _prefix_pair(old: str, new: str) -> bool:
    """Prefixes other than `a/` `b/` on one file's two names: `diff.mnemonicPrefix`'s `c/` `i/` `w/` `o/`, or
    `--src-prefix=x/ --dst-prefix=y/`. Two different first directories before the same path, as `git apply -p1`
    strips them (a `--no-prefix` diff names one file the same on both sides, and renames are read from their
    `rename from/to` lines)."""
    first, _, rest = old.partition("/")
    second, _, other = new.partition("/")
    return bool(first and second and rest) and first != second and rest == other


def _has_git_prefixes(old: str | None, new: str | None) -> bool:
    if old is not None and new is not None:
        return old.startswith("a/") and new.startswith("b/")
    if old is not None:
        return old.startswith("a/")
    return new is not None and new.startswith("b/")
