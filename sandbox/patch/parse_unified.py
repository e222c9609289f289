"""Parser for unified diffs: `git diff` (extended headers, renames, modes), `diff -u` and `diff -ruN`.

Hunk counts are checked but not trusted: when they disagree with the lines that follow, the hunk is recounted from
its lines, as `git apply --recount` does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sandbox.patch.git_meta import GIT_META, GitMeta, binary_refusal, is_binary_notice, record_meta
from sandbox.patch.hunk_body import check_eof_marks, fill_hunk, header_anchor, line_op, new_hunk_line
from sandbox.patch.ops import FileKind, FilePatch, Hunk, HunkLine, MalformedPatch, PathChoice
from sandbox.patch.paths import DEV_NULL, git_header_names, git_prefixed, header_name, path_choice

_NAME_PREFIXES = frozenset({"rename from ", "rename old ", "rename to ", "rename new ", "copy from ", "copy to "})
_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_COMBINED = ("diff --cc ", "diff --combined ")


def parse_unified(lines: list[str], *, has_cr: bool = True) -> list[FilePatch]:
    """Parse every file section of a unified diff; `lines` are the patch's lines without their LF. `has_cr`
    False promises that no line holds a CR (the caller saw none in the patch text)."""
    return list(_Parser(lines, has_cr=has_cr).run())


def iter_unified(lines: list[str], *, has_cr: bool = True) -> Iterator[FilePatch]:
    """`parse_unified`, one section at a time: the engine plans each while the next is parsed."""
    return _Parser(lines, has_cr=has_cr).run()


class _Parser:
    def __init__(self, lines: list[str], *, has_cr: bool = True) -> None:
        self.lines = lines
        self.n = len(lines)
        self.has_cr = has_cr
        self.informative = False
        if has_cr:  # a patch without any CR (the usual one) needs no join of its lines to count them
            joined = "\n".join(lines)
            crs = joined.count("\r\n") + joined.endswith("\r")
            self.informative = 0 < crs < self.n

    def text(self, i: int) -> str:
        return self.lines[i].rstrip("\r")

    def run(self) -> Iterator[FilePatch]:
        i = 0
        while i < self.n:
            line = self.text(i)
            if line.startswith("diff --git "):
                git_section, i = self.git_section(i)
                if git_section is not None:
                    yield git_section
            elif line.startswith(_COMBINED):
                raise _combined_refusal(i + 1)
            elif self.is_plain_header(i):
                section, i = self.plain_section(i)
                yield section
            elif line.startswith("GIT binary patch") or is_binary_notice(line):
                raise binary_refusal(i + 1, line)
            elif line.startswith("@@"):
                raise self.headless(i)
            else:
                i += 1  # preamble: commit message, `Index:` lines, `Only in` lines, prose

    def headless(self, i: int) -> MalformedPatch:
        """The refusal of a hunk at line `i` with no file header; when the line before it is half of one (a `---`
        without its `+++`, or the reverse), that line is named with the one to add."""
        before = self.text(i - 1) if i else ""
        for have, need, prefix in (("--- ", "+++ ", "b/"), ("+++ ", "--- ", "a/")):
            if before.startswith(have):
                name = before[len(have) :].split("\t")[0].strip()
                named = name[2:] if name.startswith(("a/", "b/")) else name
                line = f"{need}{prefix}{named}" if named and named != "/dev/null" else f"{need}{prefix}<path>"
                return MalformedPatch(
                    i,
                    f"this file header has a `{have.strip()}` line but no `{need.strip()}` line, so the hunk after it "
                    "is not read",
                    f"add the `{line}` line {'after' if have == '--- ' else 'before'} it (a file header is a `---` line"
                    " then a `+++` line)",
                )
        return MalformedPatch(
            i + 1,
            "this hunk has no file header, so the file it changes is unknown",
            "start each file's hunks with `--- a/<path>` and `+++ b/<path>` lines",
        )

    def is_plain_header(self, i: int) -> bool:
        return self.text(i).startswith("--- ") and i + 1 < self.n and self.text(i + 1).startswith("+++ ")

    def is_boundary(self, i: int) -> bool:
        line = self.text(i)
        if line.startswith(("@@", "diff ", "Index: ")):
            return True
        return self.is_plain_header(i) and (i + 2 >= self.n or self.text(i + 2).startswith("@@"))

    def git_section(self, start: int) -> tuple[FilePatch | None, int]:
        """One `diff --git` section, or None (and the next line) for a `diff --git` line that nothing of its
        section follows: git skips such a line as prose (apply.c `find_header`), so that `---` / `+++` lines after
        a blank line are read as a section of their own rather than as an empty git section."""
        meta = GitMeta(names=git_header_names(self.text(start)[len("diff --git ") :], start + 1))
        i = start + 1
        old: str | None = None
        new: str | None = None
        have_names = False
        while i < self.n:
            line = self.text(i)
            if line.startswith("GIT binary patch") or is_binary_notice(line):
                raise binary_refusal(i + 1, line)
            prefix = next((p for p in GIT_META if line.startswith(p)), None)
            if prefix is not None:
                value = line[len(prefix) :]
                # A rename's or copy's name is the rest of the line, spaces included (git quotes only control
                # characters, quotes, backslashes and non-ASCII): ` lead.txt` is not `lead.txt`.
                record_meta(meta, prefix, value if prefix in _NAME_PREFIXES else value.strip(), i + 1)
                i += 1
                continue
            if self.is_plain_header(i):
                old = self.side_name(i, 4)[0]
                new = self.side_name(i + 1, 4)[0]
                have_names = True
                i += 2
            break
        if i == start + 1 and not (i < self.n and self.text(i).startswith("@@")):
            return None, i
        hunks, i = self.read_hunks(i)
        if not have_names and meta.names is not None:
            old, new = meta.names
            old = None if meta.new_file_mode else old
            new = None if meta.deleted else new
        moved = _moved(meta)
        if moved is None and old is None and new is None:
            raise MalformedPatch(
                start + 1, "cannot tell the two file names of this `diff --git` line apart", "add `---` / `+++` lines"
            )
        return self.git_file(meta, old, new, hunks, start), i

    def git_file(self, meta: GitMeta, old: str | None, new: str | None, hunks: list[Hunk], start: int) -> FilePatch:
        moved = _moved(meta)
        kind: FileKind = "modify"
        if moved is not None:
            kind = moved[0]
        elif meta.new_file_mode is not None or (old is None and new is not None):
            kind = "add"
        elif meta.deleted or (new is None and old is not None):
            kind = "delete"
        mode = meta.new_file_mode if kind == "add" else meta.new_mode
        if moved is not None:
            # `rename from` / `copy to` names never carry the `a/` `b/` prefixes (git strips one level less from
            # them, so none at -p1): `rename to b/x.txt` moves the file into a directory named `b`.
            # The source is read as written, then without the spaces at its ends that an editor may have added.
            path, new_path = PathChoice(moved[1], [moved[1], moved[1].strip()]), PathChoice.exact(moved[2])
        else:
            prefixed = git_prefixed(meta.names, old, new)
            path = path_choice(old, new, git=True, use_new=kind == "add", prefixed=prefixed)
            new_path = None
        if kind == "modify" and not hunks and (mode is None or mode == meta.old_mode):
            raise MalformedPatch(
                start + 1,
                f"the `diff --git` section for {path.candidates[0]} changes nothing: it has no hunks and no mode "
                "change, new file, deleted file, rename or copy line (`git apply` refuses it as 'patch with only "
                "garbage')",
                "give the section its `---` / `+++` lines and `@@` hunks, or leave it out",
            )
        section = FilePatch(kind, path, start + 1, "unified", hunks, new_path=new_path)
        section.new_mode = mode
        section.crlf_informative = self.informative
        return section

    def side_name(self, i: int, skip: int) -> tuple[str | None, bool]:
        name, epoch = header_name(self.lines[i][skip:], i + 1)
        return (None if name == DEV_NULL else name), epoch

    def plain_section(self, start: int) -> tuple[FilePatch, int]:
        old, old_epoch = self.side_name(start, 4)
        new, new_epoch = self.side_name(start + 1, 4)
        if old is None and new is None:
            raise MalformedPatch(start + 1, "both sides of this file header are /dev/null", "name the file")
        hunks, i = self.read_hunks(start + 2)
        if not hunks:
            raise MalformedPatch(
                start + 1, f"the file header for {new or old} has no hunks", "follow it with `@@ -l,n +l,n @@` hunks"
            )
        kind: FileKind = "modify"
        if old is None or (old_epoch and hunks and all(_old_empty(h) for h in hunks)):
            kind = "add"
        elif new is None or (new_epoch and hunks and all(not h.new_lines for h in hunks)):
            kind = "delete"
        use_new = kind == "add"
        path = path_choice(old, new, git=False, use_new=use_new)
        if kind == "modify" and old is not None and new is not None and old != new:
            path = _either_name(path, path_choice(old, new, git=False, use_new=True))
        section = FilePatch(kind, path, start + 1, "unified", hunks)
        section.crlf_informative = self.informative
        return section, i

    def read_hunks(self, i: int) -> tuple[list[Hunk], int]:
        hunks: list[Hunk] = []
        while i < self.n and self.text(i).startswith("@@"):
            hunk, i = self.read_hunk(i, len(hunks) + 1)
            hunks.append(hunk)
            after_blanks = i
            while after_blanks < self.n and self.text(after_blanks) == "":
                after_blanks += 1
            if after_blanks < self.n and self.text(after_blanks).startswith("@@"):
                i = after_blanks  # blank lines between two hunks separate them
        return hunks, i

    def read_hunk(self, start: int, number: int) -> tuple[Hunk, int]:
        header = self.text(start)
        if header.startswith("@@@"):
            raise _combined_refusal(start + 1)
        match = _HUNK_RE.match(header)
        hunk = Hunk(number, start + 1, header, [])
        end = None if match is None else self.read_counted(start, match, hunk)
        if end is None:
            hunk = Hunk(number, start + 1, header, [])
            body, end = self.read_recounted(start + 1)
            fill_hunk(hunk, body)
        if match is not None:
            old_count = 1 if match.group(2) is None else int(match.group(2))
            old_line = int(match.group(1))
            hunk.old_start = old_line if old_count == 0 else max(old_line - 1, 0)
        else:
            anchor = header_anchor(header)
            if anchor:  # `@@ class B:`: a Codex anchor in a diff, which the hunk goes after when it names a line
                hunk.anchors, hunk.soft_anchors = [anchor], True
        if not hunk.lines:
            raise MalformedPatch(start + 1, f"hunk {number} has no lines", "give each hunk its context and changes")
        if hunk.eof_marks:
            check_eof_marks(hunk)
        return hunk, end

    def read_counted(self, start: int, match: re.Match[str], hunk: Hunk) -> int | None:
        """Fill `hunk` with its lines as its counts say; where they end, or None when the counts do not fit the
        lines that follow (`hunk` is then left empty)."""
        old_left = 1 if match.group(2) is None else int(match.group(2))
        new_left = 1 if match.group(4) is None else int(match.group(4))
        lines, n = self.lines, self.n
        marked = False  # a `\\ No newline at end of file` line among them
        i = start + 1
        while (old_left > 0 or new_left > 0) and i < n:
            raw = lines[i]
            head = raw[:1]
            if head == " " or head == "" or raw == "\r":
                old_left -= 1
                new_left -= 1
            elif head == "-":
                old_left -= 1
            elif head == "+":
                new_left -= 1
            elif head == "\\":
                marked = True
            else:
                return None
            if old_left < 0 or new_left < 0:
                return None
            i += 1
        if old_left > 0 or new_left > 0:
            return None
        while i < n and lines[i].startswith("\\"):
            marked = True
            i += 1
        if self.more_hunk_lines(i):
            return None
        if marked or self.has_cr:
            fill_hunk(hunk, lines[start + 1 : i])
        else:  # only ' ', '-', '+' and empty lines: one comprehension, the lines counted above read once more
            new = new_hunk_line
            hunk.lines += [new(HunkLine, (raw[:1] or " ", raw[1:], False)) for raw in lines[start + 1 : i]]
        return i

    def more_hunk_lines(self, i: int) -> bool:
        """Whether hunk-shaped lines (not just blank ones) follow, up to the next header: the counts were short."""
        seen_text = False
        while i < self.n and not self.is_boundary(i):
            op = line_op(self.lines[i])
            if op is None:
                return False
            seen_text = seen_text or self.lines[i].rstrip("\r") != ""
            i += 1
        return seen_text

    def read_recounted(self, i: int) -> tuple[list[str], int]:
        body: list[str] = []
        while i < self.n and not self.is_boundary(i) and line_op(self.lines[i]) is not None:
            body.append(self.lines[i])
            i += 1
        if i < self.n and not self.is_boundary(i):
            self.check_no_stray_changes(i)
        while body and body[-1].rstrip("\r") == "":
            body.pop()
        return body, i

    def check_no_stray_changes(self, stop: int) -> None:
        """A hunk cut short by a line without a prefix must not leave '-' or '+' lines behind to be skipped."""
        j = stop + 1
        while j < self.n and not self.is_boundary(j):
            line = self.text(j)
            if line.startswith(("-", "+")) and line != "-- " and not self.is_plain_header(j):
                raise MalformedPatch(
                    stop + 1,
                    f"{self.text(stop)[:80]!r} is not a hunk line, and changed lines follow it",
                    "start every hunk line with ' ' (context), '-' (remove) or '+' (add); a context line may have "
                    "lost its leading space",
                )
            j += 1


def _moved(meta: GitMeta) -> tuple[FileKind, str, str] | None:
    """A rename or copy section's kind, source and target (None for any other section)."""
    if meta.rename_from is not None and meta.rename_to is not None:
        return "rename", meta.rename_from, meta.rename_to
    if meta.copy_from is not None and meta.copy_to is not None:
        return "copy", meta.copy_from, meta.copy_to
    return None


def _either_name(old: PathChoice, new: PathChoice) -> PathChoice:
    """The file a traditional (`diff -u`) modification names when its `---` and `+++` names differ.

    git's rule (apply.c `find_name_common`): when one name is the other with something tacked on the end
    (`x.py.orig`, `x.py~`, `x.py.new`), the shorter is the file, so `diff -u x.py.orig x.py` patches `x.py` and
    not its backup; otherwise the `---` name. The other name stays a fallback for when the preferred one names
    no existing file (git would refuse; GNU patch also looks for whichever exists).
    """
    first, second = old.candidates[0], new.candidates[0]
    if len(second) < len(first) and first.startswith(second):
        old, new = new, old
    return PathChoice(old.written, old.candidates + [c for c in new.candidates if c not in old.candidates])


def _combined_refusal(line: int) -> MalformedPatch:
    return MalformedPatch(
        line,
        "combined diffs (merge commits) are not supported: this `diff --cc` / `@@@` hunk compares several parents",
        "diff against one parent: `git diff <commit>^1 <commit>` gives an ordinary diff of the merge",
    )


def _old_empty(hunk: Hunk) -> bool:
    return not hunk.old_lines
