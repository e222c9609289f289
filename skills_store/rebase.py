"""Rebasing a write onto the skill as it is stored now (`rebase`).

A writer that reads skills, works on them for seconds (embedding, an LLM merge) and then writes them back must not
undo what other processes recorded meanwhile: an outcome counted by a server, an approval, a use. So every writer
that read outside the writers' lock hands `SkillBank.upsert`/`update` the copies it read (`base`); under the lock
each written skill is rebased onto the stored one: the changes the writer made to what it read are applied to what
is stored now (a three-way merge), the rest stays as stored.
"""

from __future__ import annotations

from skills_store.models import Skill

#: Counted fields: the writer's change is a difference (added to the stored count), not a value.
COUNTERS = ("uses", "successes", "failures")


def rebase(new: Skill, base: Skill, stored: Skill) -> Skill:
    """`new` (the writer's copy of `base`, changed) applied to `stored` (the copy stored now).

    - counters: stored + (new - base), so outcomes and uses counted meanwhile stay counted;
    - sources: the stored ones plus those the writer added;
    - any other field: the writer's value if it changed it, else the stored one (an approval made meanwhile stays);
    - confidence: recomputed from the prior and the counters when the writer set it and the counters moved meanwhile.
    """
    if stored == base:
        return new
    data = {}
    for name in Skill.model_fields:
        mine, was, now = getattr(new, name), getattr(base, name), getattr(stored, name)
        if name in COUNTERS:
            data[name] = max(0, now + mine - was)
        elif name == "sources":
            data[name] = list(dict.fromkeys([*now, *(s for s in mine if s not in was)]))
        else:
            data[name] = now if mine == was else mine
    out = Skill.model_validate(data)
    moved = any(getattr(out, c) != getattr(new, c) for c in COUNTERS[1:])
    if moved and new.confidence != base.confidence:
        out.recompute_confidence()
    return out
