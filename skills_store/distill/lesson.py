"""A lesson's shape, shared by both distillers and by merging: its names, its key, and its strategy text.

A distilled fix becomes a *lesson*: the signature that identifies the failure (`signature.specific`), the edit rule
learned from the patch (`rules.derive`), why it works, and up to `MAX_EXAMPLES` concrete instances with their
sources. The strategy text is laid out so that a merge can add the other copy's examples to it:

    Rule: `time.clock()` -> `time.perf_counter()`
    Why: ...
    Examples:
    - `t0 = time.clock()` -> `t0 = time.perf_counter()` in `timer.py` (traj-1)

Two drafts are one lesson when their signature and their leading rewrite agree (`lesson_key`); the key is carried
as a `lesson-<hash>` tag so stored copies are found exactly, whatever repo, file or variable names they came from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from skills_store.distill.episodes import Edit, TestRun, events
from skills_store.distill.names import Names, read_workspace_file
from skills_store.distill.rules import Rewrite
from skills_store.models import EditRewrite, Skill, Trajectory

MAX_EXAMPLES = 3
#: Touched files (edited, tested, in a traceback) read from the workspace to learn the user's own names.
MAX_FILES = 30
EXAMPLES_HEADER = "Examples:"
LESSON_TAG_PREFIX = "lesson-"
_DIFF_META = ("+++", "---", "@@", "diff ", "index ")


def trajectory_names(
    traj: Trajectory, edits: Sequence[Edit] | None = None, test_ids: Sequence[str] | None = None
) -> Names:
    """The user's own names in `traj`: what its edits and failures show, and the touched files still on disk.

    `edits` and `test_ids` (the failing tests) save reading the trajectory's events again when they are known.
    """
    names = Names()
    touched: list[str] = []
    if edits is None or test_ids is None:
        found = events(traj)
        edits = [e for e in found if isinstance(e, Edit)]
        test_ids = [f.test_id for e in found if isinstance(e, TestRun) for f in e.failures]
    for edit in edits:
        touched += edit.files
        diff = edit.diff.splitlines()
        names.add_code("\n".join(line[1:] for line in diff if line[:1] in "+- " and not line.startswith(_DIFF_META)))
    touched += [t.split("::", 1)[0] for t in test_ids if t]
    for step in traj.steps:
        if step.tool in ("run_tests", "Bash", "shell", "exec_command") and step.result is not None:
            names.add_failure_text("\n".join(_strings(step.result)), traj.workspace)
    for path in list(dict.fromkeys([*touched, *sorted(names.traceback_paths)]))[:MAX_FILES]:
        names.add_module_path(path)
        text = read_workspace_file(traj.workspace, path)
        if text is not None:
            names.add_code(text)
            names.read_files = True
    names.add_workspace_modules(traj.workspace)
    names.definitions_from = traj.workspace  # read when a rule first asks whether an attribute is a library's
    return names.finish()


def _strings(value: object, depth: int = 0) -> list[str]:
    """Every string inside a step result (failure messages keep their lines; a repr would escape them)."""
    if isinstance(value, str):
        return [value]
    if depth > 4:
        return []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v, depth + 1)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []


def lesson_key(pattern: str, rule: Sequence[EditRewrite]) -> str | None:
    """What makes two drafts one lesson: the signature and the leading rewrite (None without a rule)."""
    if not rule:
        return None
    return f"{pattern}\n{rewrite_key(rule[0].before, rule[0].after)}"


def rewrite_key(before: str, after: str) -> str:
    """One rewrite as compared: `unicode(...) -> str(...)` and `unicode -> str` are one rule."""
    for call in ("(...)", "()"):
        if before.endswith(call) and after.endswith(call):
            before, after = before.removesuffix(call), after.removesuffix(call)
    return f"{before} -> {after}"


def lesson_tag(pattern: str, rule: Sequence[EditRewrite]) -> str | None:
    key = lesson_key(pattern, rule)
    return None if key is None else LESSON_TAG_PREFIX + hashlib.sha1(key.encode()).hexdigest()[:12]


def lesson_tag_of(skill: Skill) -> str | None:
    return next((t for t in skill.tags if t.startswith(LESSON_TAG_PREFIX)), None)


def same_rule(a: Skill, b: Skill) -> bool | None:
    """Whether two skills teach the same lesson by their keys; None when either has no rule to compare."""
    ka, kb = lesson_key(a.pattern, a.rule), lesson_key(b.pattern, b.rule)
    if ka is None or kb is None:
        return None
    return ka == kb


def _side(text: str) -> str:
    return f"`{text}`" if text else "nothing"


def rule_line(rw: EditRewrite) -> str:
    if not rw.after:
        return f"remove `{rw.before}`"
    if not rw.before:
        return f"add `{rw.after}`"
    return f"`{rw.before}` -> `{rw.after}`"


def title_for(exc_type: str, rule: Sequence[EditRewrite]) -> str:
    lead = rule[0]
    if not lead.after:
        text = f"remove `{lead.before}`"
    elif not lead.before:
        text = f"add `{lead.after}`"
    else:
        text = f"replace `{lead.before}` with `{lead.after}`"
    return f"{exc_type}: {text}"[:200]


def example_line(rw: Rewrite, source: str) -> str:
    where = f" in `{rw.path}`" if rw.path else ""
    old, new = rw.old[:120], rw.new[:120]
    if not new:
        return f"- removed `{old}`{where} ({source})"
    if not old:
        return f"- added `{new}`{where} ({source})"
    return f"- `{old}` -> `{new}`{where} ({source})"


def render(rule: Sequence[EditRewrite], why: str, examples: Sequence[str]) -> str:
    lines = [f"Rule: {rule_line(rule[0])}"]
    lines += [f"Also: {rule_line(rw)}" for rw in rule[1:]]
    lines.append(f"Why: {why}")
    lines.append(EXAMPLES_HEADER)
    lines += list(examples[:MAX_EXAMPLES])
    return "\n".join(lines)


def examples_of(strategy: str) -> list[str]:
    """The example lines of a lesson's strategy (empty for a strategy of another shape)."""
    lines = strategy.splitlines()
    if EXAMPLES_HEADER not in lines:
        return []
    out = []
    for line in lines[lines.index(EXAMPLES_HEADER) + 1 :]:
        if not line.startswith("- "):
            break
        out.append(line)
    return out


def with_examples(strategy: str, extra: Sequence[str]) -> str:
    """`strategy` with examples from another copy added after its own, at most `MAX_EXAMPLES`, no repeats."""
    own = examples_of(strategy)
    if EXAMPLES_HEADER not in strategy.splitlines():
        return strategy
    seen = {_instance(e) for e in own}
    added: list[str] = []
    for line in extra:
        if len(own) + len(added) >= MAX_EXAMPLES:
            break
        if _instance(line) not in seen:
            seen.add(_instance(line))
            added.append(line)
    if not added:
        return strategy
    lines = strategy.splitlines()
    at = lines.index(EXAMPLES_HEADER) + 1 + len(own)
    return "\n".join([*lines[:at], *added, *lines[at:]])


def _instance(example: str) -> str:
    """An example without its source, so the same edit seen twice counts once."""
    return example.rsplit(" (", 1)[0]
