"""The starter pack: skills for common Python failures, loaded into an empty store on first start."""

from __future__ import annotations

from importlib import resources

from skills_store.bank import SkillBank
from skills_store.jsonl import parse_skill_lines
from skills_store.models import Skill

SEEDED_KEY = "starter_seeded"


def load_starter_pack() -> list[Skill]:
    text = resources.files("skills_store").joinpath("data/starter_skills.jsonl").read_text(encoding="utf-8")
    return [Skill.model_validate(r) for r in parse_skill_lines(text.splitlines(), "starter_skills.jsonl")]


def seed_if_new(bank: SkillBank) -> int:
    """Load the starter pack the first time a store is opened, if it is empty; returns skills added.

    A store that was emptied on purpose later is left empty: the pack is offered once per data dir.
    """
    if bank.catalog.get_meta(SEEDED_KEY) is not None:
        return 0
    added = 0
    if bank.count() == 0:
        skills = load_starter_pack()
        bank.upsert(skills)
        added = len(skills)
    bank.catalog.set_meta(SEEDED_KEY, str(added))
    return added


def decline_if_new(bank: SkillBank) -> None:
    """A store opened with the starter pack turned off has had its one offer: opening it later with the pack on
    (another shell's settings than the client's) does not seed it."""
    if bank.catalog.get_meta(SEEDED_KEY) is None:
        bank.catalog.set_meta(SEEDED_KEY, "declined")
