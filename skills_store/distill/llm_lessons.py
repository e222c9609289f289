"""The LLM distiller's lessons: episodes grouped by signature, and the model's drafts held to the lesson shape.

Before any request each trajectory is analysed as the heuristic distiller would (fix episodes, the signature that
keeps the library's names, the edit rule its patch makes). Trajectories whose fixes share a signature form one
*group*; the prompt shows each group with its signature, and the model is asked for one lesson per group.

A draft that names its group is then held to the same shape as a heuristic lesson, whatever the model wrote:

- its pattern is the group's signature (a model's pattern that drops `collections` or keeps a user's variable
  would make a case note, not a lesson);
- its rule is the model's when every rewrite is short and free of the user's identifiers, else the rule derived
  from the patches; with neither, the model's strategy stands, in words;
- its strategy is rendered by `lesson.render`: the rule, the model's why, and up to three real examples from the
  group's patches with their sources; its sources are every trajectory of the group;
- one lesson per group: a second draft for a group that already has one is dropped.

Drafts without a group (pitfalls, lessons that are not about one failure) keep the model's text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from skills_store.distill import lesson
from skills_store.distill.changes import summarise
from skills_store.distill.episodes import episodes
from skills_store.distill.names import Names
from skills_store.distill.rules import Rewrite, derive
from skills_store.distill.signature import specific
from skills_store.models import EditRewrite, Trajectory

_PLACEHOLDER_RE = re.compile(r"<\w+>")
_WORD_RE = re.compile(r"[A-Za-z_]\w*")


class RuleDraft(BaseModel):
    """One rewrite the model says the fix made, the user's names as `<name>` placeholders."""

    before: str = Field(default="", max_length=160, description="Tokens before, e.g. `time.clock()`.")
    after: str = Field(default="", max_length=160, description="Tokens after, e.g. `time.perf_counter()`.")


@dataclass
class Finding:
    """What one trajectory's fix teaches, found without a model."""

    trajectory_id: str
    signature: str
    exc_type: str
    rewrites: list[Rewrite]
    names: Names


@dataclass
class Group:
    key: str
    """`G1`, `G2`, ... as the prompt names it."""
    signature: str
    exc_type: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def trajectory_ids(self) -> list[str]:
        return list(dict.fromkeys(f.trajectory_id for f in self.findings))

    def derived_rule(self) -> list[EditRewrite]:
        first = next((f for f in self.findings if f.rewrites), None)
        return [EditRewrite(before=r.before, after=r.after) for r in first.rewrites] if first else []

    def examples(self) -> list[str]:
        return [lesson.example_line(f.rewrites[0], f.trajectory_id) for f in self.findings if f.rewrites]

    def user_names(self) -> set[str]:
        out: set[str] = set()
        for f in self.findings:
            out |= f.names.user
        return out


def findings(traj: Trajectory) -> list[Finding]:
    """The fixes of `traj` with a signature, as lessons would name them (first fix of each signature)."""
    fixes, _ = episodes(traj)
    fixes = [f for f in fixes if f.failure.signature is not None]
    if not fixes:
        return []
    names = lesson.trajectory_names(traj)
    out: dict[str, Finding] = {}
    for fix in fixes:
        assert fix.failure.signature is not None
        sig = specific(fix.failure.signature, names)
        if sig.text not in out:
            rewrites = derive(summarise(fix.edits).files, names, sig.example)
            out[sig.text] = Finding(traj.trajectory_id, sig.text, sig.exc_type, rewrites, names)
    return list(out.values())


def group(trajectories: Sequence[Trajectory]) -> tuple[list[Group], dict[str, list[str]]]:
    """Groups by signature (first seen first), and each trajectory's group keys."""
    groups: dict[str, Group] = {}
    member: dict[str, list[str]] = {}
    for traj in trajectories:
        for found in findings(traj):
            g = groups.get(found.signature)
            if g is None:
                g = groups[found.signature] = Group(f"G{len(groups) + 1}", found.signature, found.exc_type)
            g.findings.append(found)
            member.setdefault(traj.trajectory_id, []).append(g.key)
    return list(groups.values()), member


def valid_rule(rule: Sequence[RuleDraft], user: set[str]) -> list[EditRewrite]:
    """The model's rule when it is a rule: 1-3 rewrites that change something and name none of the user's own."""
    out: list[EditRewrite] = []
    for rw in rule[: lesson.MAX_EXAMPLES]:
        before, after = rw.before.strip().strip("`"), rw.after.strip().strip("`")
        words = set(_WORD_RE.findall(_PLACEHOLDER_RE.sub(" ", f"{before} {after}")))
        if before == after or words & user:
            return []
        out.append(EditRewrite(before=before, after=after))
    return out


def shape(
    group: Group, title: str, why: str, strategy: str, rule: Sequence[RuleDraft]
) -> tuple[str, str, str, list[EditRewrite]]:
    """(title, pattern, strategy, rule) of a group's lesson from a model's draft (see the module doc)."""
    chosen = valid_rule(rule, group.user_names()) or group.derived_rule()
    if not chosen:
        return title, group.signature, strategy, []
    user = group.user_names()
    if set(_WORD_RE.findall(title)) & user:
        title = lesson.title_for(group.exc_type, chosen)
    text = lesson.render(chosen, " ".join((why or strategy).split())[:600], group.examples())
    return title, group.signature, text, chosen


def prompt(batch: list[tuple[Trajectory, str]], member: dict[str, list[str]], groups: dict[str, Group]) -> str:
    """The batch's digests under their group headers (records of no group last)."""
    parts: list[str] = []
    shown: set[str] = set()
    for traj, text in batch:
        key = (member.get(traj.trajectory_id) or [""])[0]
        if key and key not in shown:
            shown.add(key)
            g = groups[key]
            ids = ", ".join(i for i in g.trajectory_ids if i in {t.trajectory_id for t, _ in batch})
            parts.append(f"# group {key}: {g.signature} (records: {ids})")
        elif not key and "" not in shown:
            shown.add("")
            parts.append("# records of no group")
        parts.append(text)
    return "\n\n".join(parts)
