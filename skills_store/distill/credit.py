"""Credit only for skills that were used: which of the skills a session was shown did it apply?

A closed session moves a skill's confidence only when it used the skill:

- the agent named it in `record_trajectory(used_skills=[...])` and the session was shown it, or
- the skill has an edit rule (`Skill.rule`) and a patch the session applied *after* the skill was first shown
  makes the same rewrite (compared as `lesson.rewrite_key`, so `unicode(...) -> str(...)` matches `unicode ->
  str`). A skill the session was shown before any step recorded it (injected by the Claude Code hook) counts as
  shown from the start.

Shown but unused skills move nothing: a relevant-looking suggestion that the agent ignored says nothing about
whether its advice works. Their exposure is still counted, as `uses`, when they are returned.

A skill named in `used_skills` that the session was never shown (not in `skills_shown`: search results,
`run_tests` suggestions, skills the Claude Code hook injected into that trajectory) is ignored (`unshown_used`
lists them, the outcome pass counts them in `OutcomeReport.unshown`). Otherwise any client could push any skill's
confidence towards 1 with empty sessions that each name it, and a skill's counts would no longer be those of the
sessions that were shown it, which is what the SKILL.md export and the docs say they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skills_store.distill import lesson
from skills_store.distill.changes import summarise
from skills_store.distill.episodes import Edit, events
from skills_store.distill.rules import derive
from skills_store.models import Skill, Trajectory
from skills_store.trajectories.summaries import used_skills

if TYPE_CHECKING:
    from skills_store.bank import SkillBank


def first_shown(traj: Trajectory, skill_id: str) -> int:
    """Index of the first step whose result names `skill_id` (-1: shown before any recorded step)."""
    for step in traj.steps:
        if step.result is not None and skill_id in str(step.result):
            return step.index
    return -1


def applied_rule(traj: Trajectory, skill: Skill) -> bool:
    """Whether a patch applied after `skill` was first shown makes one of the rewrites of its rule."""
    if not skill.rule:
        return False
    start = first_shown(traj, skill.skill_id)
    later = [e for e in events(traj) if isinstance(e, Edit) and e.index > start]
    if not later:
        return False
    names = lesson.trajectory_names(traj)
    made = {lesson.rewrite_key(rw.before, rw.after) for rw in derive(summarise(later).files, names, "")}
    return any(lesson.rewrite_key(r.before, r.after) in made for r in skill.rule)


def unshown_used(traj: Trajectory) -> list[str]:
    """The skills `traj` names in `used_skills` without having been shown them: they get no credit."""
    shown = set(traj.skills_shown)
    return [s for s in used_skills(traj) if s not in shown]


def credited(traj: Trajectory, bank: SkillBank) -> list[str]:
    """The skills whose counters `traj`'s outcome moves: shown, and named as used or their rule applied later."""
    shown = set(traj.skills_shown)
    named = [s for s in used_skills(traj) if s in shown]
    rest = [s for s in traj.skills_shown if s not in named]
    matched = [s.skill_id for s in bank.catalog.get(rest) if applied_rule(traj, s)] if rest else []
    return list(dict.fromkeys([*named, *matched]))
