"""Exports come back as the same skills: JSONL (also the prune/dedupe archives) and SKILL.md folders, imported into a
fresh bank or into the bank they came from, on texts built to break line splitting, YAML and Markdown sections."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skills_ref.validator import validate as reference_validate

from skills_store.bank import SkillBank
from skills_store.embedders import make_embedder
from skills_store.errors import InvalidInput
from skills_store.jsonl import dump_skills, import_records, merge_record, read_skill_records
from skills_store.models import EditRewrite, Skill
from skills_store.skill_md import export_skills, render, skill_name
from skills_store.skill_md_read import parse_skill, read_skill_folder_records, read_skill_folders, split_frontmatter

#: Characters `str.splitlines` breaks at besides "\n" and "\r".
LINE_BREAKS = ["\u2028", "\u2029", "\x85", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c"]
CREATED = datetime(2020, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
UPDATED = datetime(2021, 6, 7, 8, 9, 10, tzinfo=UTC)


def _breaking(n: int, ch: str) -> Skill:
    return Skill(
        skill_id=f"sk-break-{n}",
        title=f"Title {ch} with a break",
        pattern=f"KeyError: 'x'{ch}y",
        strategy=f"Do{ch}this.",
        sources=[f"traj{ch}1", "traj-2"],
        rule=[EditRewrite(before=f"a{ch}b", after="c")],
        created_at=CREATED,
        updated_at=UPDATED,
    )


def _adversarial() -> list[Skill]:
    dates = {"created_at": CREATED, "updated_at": UPDATED}
    return [
        Skill(skill_id="sk-rule", title="Use perf_counter", pattern="AttributeError: module 'time' has no "
              "attribute 'clock'", strategy="Replace it.", rule=[EditRewrite(before="time.clock()",
              after="time.perf_counter()"), EditRewrite(before="", after="import time")], confidence=0.123456,
              prior=0.654321, successes=3, failures=1, uses=7, tags=["python", "c++"], language="python",
              repo="acme/shop", sources=["a,b", "c"], **dates),
        Skill(skill_id="sk-title", title="line one\nline two\n## When you see\nX", pattern="p1", strategy="s1",
              **dates),
        Skill(skill_id="sk-pattern", title="t2", pattern="p2\n## What to do\nEVIL\n## Evidence\n```\n", strategy="s2",
              **dates),
        Skill(skill_id="sk-fenced", title="```python", pattern="```python\nx = 1\n```\n````\n~~~", strategy="s4\n"
              "## Evidence\nfoo\n```python\nunclosed fence\n## What to do", **dates),
        Skill(skill_id="sk-dashes", title="---", pattern="---\nfoo: bar\n---", strategy="---\nfoo: 1\n---",
              sources=["[x]", "y"], **dates),
        Skill(skill_id="sk-yaml", title="yaml: 'q' \"dq\" # hash: colon - dash {a: [b]} & *ref !tag %x @y `z`",
              pattern="p\ttab  ", strategy="s\r\nwith crlf\rand a bare CR", sources=["", "x\n## Evidence\ny"],
              **dates),
        Skill(skill_id="sk-unicode", title="ünïcødé 日本語 🎉 \u00a0nbsp", pattern="\x1cstarts with a separator",
              strategy="\x1fends with one\x1f", language="py\nthon", status="candidate", **dates),
        *(_breaking(n, ch) for n, ch in enumerate(LINE_BREAKS)),
    ]  # fmt: skip


def _bank(path: Path) -> SkillBank:
    return SkillBank.open(path, make_embedder("hash"))


def _stored(bank: SkillBank, skills: list[Skill]) -> list[dict]:
    found = {s.skill_id: s for s in bank.catalog.get([s.skill_id for s in skills])}
    return [found[s.skill_id].model_dump() for s in skills]


# -- JSONL ------------------------------------------------------------------------------------------------------


def test_a_jsonl_export_of_texts_with_line_separators_imports_back_identical(tmp_path: Path) -> None:
    skills = [_breaking(n, ch) for n, ch in enumerate(LINE_BREAKS)]
    path = tmp_path / "skills.jsonl"
    text = dump_skills(skills)
    path.write_text(text, encoding="utf-8")
    assert len(text.splitlines()) == len(skills)  # escaped: other line readers see one skill a line too
    back = [merge_record(None, r) for r in read_skill_records(path)]
    assert [s.model_dump() for s in back] == [s.model_dump() for s in skills]


def test_an_older_jsonl_export_with_raw_line_separators_imports(tmp_path: Path) -> None:
    skills = [_breaking(n, ch) for n, ch in enumerate(["\u2028", "\u2029", "\x85"])]
    path = tmp_path / "old.jsonl"
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("".join(s.model_dump_json() + "\r\n" for s in skills))  # raw, as pydantic writes them
    assert "\u2028" in path.read_text(encoding="utf-8")
    back = [merge_record(None, r) for r in read_skill_records(path)]
    assert [s.model_dump() for s in back] == [s.model_dump() for s in skills]


def test_a_jsonl_export_imports_into_a_fresh_bank_and_its_own_bank_unchanged(tmp_path: Path) -> None:
    skills = _adversarial()
    path = tmp_path / "skills.jsonl"
    path.write_text(dump_skills(skills), encoding="utf-8")
    bank = _bank(tmp_path / "bank")
    try:
        for added in (len(skills), 0):  # into a fresh bank, then again into the bank that now holds them
            assert import_records(bank, read_skill_records(path)) == (added, len(skills) - added)
            assert _stored(bank, skills) == [s.model_dump() for s in skills]
    finally:
        bank.close()


# -- SKILL.md ---------------------------------------------------------------------------------------------------


def test_a_skill_md_export_reads_back_as_the_same_skills(tmp_path: Path) -> None:
    skills = _adversarial()
    export_skills(skills, tmp_path / "out")
    back = {s.skill_id: s for s in read_skill_folders(tmp_path / "out")}
    for skill in skills:
        assert back[skill.skill_id].model_dump() == skill.model_dump(), skill.skill_id


def test_adversarial_exports_pass_the_reference_validator_and_keep_the_title_on_one_line(tmp_path: Path) -> None:
    for path in export_skills(_adversarial(), tmp_path / "out"):
        assert reference_validate(path.parent) == []
        _, body = split_frontmatter(path.read_text(encoding="utf-8"))
        assert body.split("\n")[0].startswith("# ")
        assert body.split("\n")[1] == ""
    one = render(_adversarial()[1])
    assert "\n# line one line two ## When you see X\n" in one


@pytest.mark.parametrize("via", ["records", "skills"])
def test_a_skill_md_export_imports_into_a_fresh_bank_and_its_own_bank_unchanged(tmp_path: Path, via: str) -> None:
    """`records` is what an import should upsert; `skills` is the whole parsed skill (the CLI's path today)."""
    skills = [s for s in _adversarial() if s.status == "active"]
    own = _bank(tmp_path / "own")
    fresh = _bank(tmp_path / "fresh")
    try:
        own.upsert(skills)
        export_skills(own.catalog.get([s.skill_id for s in skills]), tmp_path / "md")
        for bank, added in ((fresh, len(skills)), (own, 0), (fresh, 0)):
            if via == "records":
                records = read_skill_folder_records(tmp_path / "md")
            else:
                records = [s.model_dump(mode="json") for s in read_skill_folders(tmp_path / "md")]
            assert import_records(bank, records) == (added, len(skills) - added)
            assert _stored(bank, skills) == [s.model_dump() for s in skills]
    finally:
        own.close()
        fresh.close()


OLD_EXPORT = """---
name: {name}
description: 'Use perf_counter. Use when you see: AttributeError.'
metadata:
  skill_id: sk-rule
  title: Use perf_counter
  confidence: '0.9000'
  prior: '0.7000'
  successes: '4'
  failures: '0'
  uses: '9'
  sources: traj-1,traj-2
  tags: python
  language: python
  repo: ''
  generator: skillbank
---

# Use perf_counter

## When you see

```text
AttributeError: module 'time' has no attribute 'clock'
```

## What to do

Replace it, edited by hand.

## Evidence

- Confidence 0.90 (prior 0.70; 4 successes and 0 failures in sessions that were shown it); shown 9 times.
"""


def test_an_older_export_updates_only_the_fields_it_carries(tmp_path: Path) -> None:
    stored = _adversarial()[0]
    folder = tmp_path / skill_name(stored)
    folder.mkdir()
    (folder / "SKILL.md").write_text(OLD_EXPORT.format(name=folder.name), encoding="utf-8")
    [record] = read_skill_folder_records(folder)
    assert "rule" not in record
    assert "created_at" not in record
    assert record["sources"] == ["traj-1", "traj-2"]  # the comma form older exports wrote
    bank = _bank(tmp_path / "bank")
    try:
        bank.upsert([stored])
        assert import_records(bank, [record]) == (0, 1)
        [after] = bank.catalog.get(["sk-rule"])
    finally:
        bank.close()
    assert after.rule == stored.rule
    assert after.created_at == stored.created_at
    assert (after.strategy, after.confidence, after.uses, after.repo) == ("Replace it, edited by hand.", 0.9, 9, None)


def test_an_edited_body_wins_over_the_exact_text_in_metadata(tmp_path: Path) -> None:
    skill = Skill(skill_id="sk-e", title="first\nsecond", pattern="p\r\nq", strategy="s\r\nt", created_at=CREATED)
    text = render(skill)
    assert parse_skill(text).model_dump(include={"title", "pattern", "strategy"}) == skill.model_dump(
        include={"title", "pattern", "strategy"}
    )
    edited = text.replace("# first second", "# A new title").replace("p\r\nq", "p2").replace("s\r\nt\n", "s2\n")
    back = parse_skill(edited)
    assert (back.title, back.pattern, back.strategy) == ("A new title", "p2", "s2")


def test_a_hand_written_skill_finds_sections_and_title_outside_code_blocks(tmp_path: Path) -> None:
    folder = tmp_path / "shell-tips"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: shell-tips\ndescription: Shell tips. Use when a script fails.\nmetadata:\n  author: me\n"
        "  status: draft\n---\n\n```bash\n# not the title\n## When you see\nnot a section\n```\n\n# Shell tips\n\n"
        "## When you see\n\n~~~\nset -e\n## What to do\n~~~\n\n## What to do\n\nQuote your variables.\n"
        "```\n## Evidence\n```\n",
        encoding="utf-8",
    )
    [skill] = read_skill_folders(folder)
    assert (skill.skill_id, skill.title, skill.status) == ("skillmd-shell-tips", "Shell tips", "active")
    assert skill.pattern == "set -e\n## What to do"
    assert skill.strategy == "Quote your variables.\n```\n## Evidence\n```"
    assert skill.sources == ["skill-md:shell-tips"]


def _valid_text(text: str) -> bool:
    try:
        Skill(title=text, pattern=text, strategy=text, sources=[text])
    except ValueError:
        return False
    return True


TEXT = st.lists(
    st.sampled_from([*LINE_BREAKS, "\n", "\r", "\t", " ", "-", "#", "`", "~", "'", '"', ":", ",", "[", "\\", "a", "é",
                     "🎉", "## What to do\n", "## Evidence\n", "## When you see\n", "```", "\n# ", "\n---\n"]),
    min_size=1, max_size=20,
).map("".join).filter(_valid_text)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(title=TEXT, pattern=TEXT, strategy=TEXT, source=TEXT)
def test_any_text_survives_a_skill_md_round_trip(title: str, pattern: str, strategy: str, source: str) -> None:
    skill = Skill(skill_id="sk-p", title=title, pattern=pattern, strategy=strategy, sources=[source, "x"])
    assert parse_skill(render(skill), skill_name(skill)).model_dump() == skill.model_dump()


def test_rule_metadata_that_is_not_json_is_refused_naming_it() -> None:
    text = render(_adversarial()[0]).replace('rule: \'[{"before"', "rule: '[{before")
    with pytest.raises(InvalidInput, match="metadata `rule` is not a JSON list"):
        parse_skill(text)


def test_the_rule_is_json_in_the_metadata() -> None:
    front, _ = split_frontmatter(render(_adversarial()[0]))
    assert json.loads(front["metadata"]["rule"])[0] == {"before": "time.clock()", "after": "time.perf_counter()"}
    assert json.loads(front["metadata"]["sources"]) == ["a,b", "c"]
    assert front["metadata"]["confidence"] == "0.123456"
