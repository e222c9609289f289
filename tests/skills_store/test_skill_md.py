"""Agent Skills export and import: exported folders follow the published rules and come back as the same skills."""

from __future__ import annotations

from pathlib import Path

import pytest
from skills_ref.validator import validate as reference_validate

from skills_store.errors import InvalidInput
from skills_store.skill_md import MAX_DESCRIPTION, export_skills, render, skill_name
from skills_store.skill_md_read import (
    SkillFolderImportFailed,
    parse_skill,
    read_skill_folders,
    split_frontmatter,
    validate,
)

AWKWARD = dict(
    title="Ünïcode title --- with 'quotes': and # hashes & a long tail " + "x" * 100,
    pattern='KeyError: "user" --- raised in <path>: #1\n' + "long pattern " * 300,
    strategy="Step one.\n---\n## A heading inside the strategy\nStep two with ``` fences ```.",
)


@pytest.fixture
def skills(skill_factory):
    return [
        skill_factory("sk-1", "NameError: fix a misspelt name", "NameError: name '<name>' is not defined",
                      "Rename it.", confidence=0.7, sources=["traj-1", "traj-2"], tags=["python", "rename"],
                      language="python", repo="acme/shop", successes=2, failures=1, uses=5),
        skill_factory("sk-2", **AWKWARD),
        skill_factory("sk-3", "!!!", "???", "Do the thing."),
    ]  # fmt: skip


def test_every_exported_folder_passes_the_reference_validator(skills, tmp_path: Path) -> None:
    written = export_skills(skills, tmp_path / "out")
    assert len(written) == 3
    for path in written:
        assert path.name == "SKILL.md"
        assert reference_validate(path.parent) == []
        front, _ = split_frontmatter(path.read_text())
        assert validate(front, path.parent.name) == []


def test_the_frontmatter_follows_the_agent_skills_rules(skills) -> None:
    for skill in skills:
        front, body = split_frontmatter(render(skill))
        assert set(front) == {"name", "description", "metadata"}
        name = front["name"]
        assert name == skill_name(skill)
        assert 1 <= len(name) <= 64
        assert set(name) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")
        assert not name.startswith("-")
        assert not name.endswith("-")
        assert "--" not in name
        assert 0 < len(front["description"]) <= MAX_DESCRIPTION
        assert "Use when you see: " in front["description"]
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in front["metadata"].items())
        assert front["metadata"]["skill_id"] == skill.skill_id
        assert "## What to do" in body
        assert "## Evidence" in body


def test_metadata_carries_id_confidence_and_sources(skills) -> None:
    front, body = split_frontmatter(render(skills[0]))
    meta = front["metadata"]
    assert (meta["skill_id"], meta["confidence"], meta["sources"]) == ("sk-1", "0.7000", "traj-1,traj-2")
    assert front["description"] == (
        "NameError: fix a misspelt name. Use when you see: NameError: name '<name>' is not defined."
    )
    assert "2 successes and 1 failures" in body
    assert "Learned from: traj-1, traj-2." in body


def test_names_are_unique_per_skill_even_with_equal_titles(skill_factory) -> None:
    a = skill_factory("a", "Same title", "p", "s")
    b = skill_factory("b", "Same title", "p", "s")
    assert skill_name(a) != skill_name(b)
    assert skill_name(a).startswith("same-title-")


def test_exported_skills_import_back_unchanged(skills, tmp_path: Path) -> None:
    export_skills(skills, tmp_path / "out")
    back = {s.skill_id: s for s in read_skill_folders(tmp_path / "out")}
    fields = {"title", "pattern", "strategy", "confidence", "prior", "sources", "tags", "language", "repo",
              "successes", "failures", "uses"}  # fmt: skip
    for skill in skills:
        assert back[skill.skill_id].model_dump(include=fields) == skill.model_dump(include=fields), skill.skill_id


def test_re_exporting_overwrites_the_same_folders(skills, tmp_path: Path) -> None:
    first = export_skills(skills, tmp_path / "out")
    second = export_skills(skills, tmp_path / "out")
    assert first == second
    assert len(list((tmp_path / "out").iterdir())) == 3


def test_a_hand_written_agent_skill_imports_with_its_use_when_clause_as_pattern(tmp_path: Path) -> None:
    folder = tmp_path / "pdf-processing"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "\ufeff---\nname: pdf-processing\ndescription: Extract text from PDFs. Use when handling PDF files.\n"
        "license: Apache-2.0\n---\n\n# PDF processing\n\nRun `pdftotext -layout in.pdf out.txt`.\n",
        encoding="utf-8",
    )  # with a BOM, as Windows editors write UTF-8: it was refused as having no frontmatter
    [skill] = read_skill_folders(folder)
    assert skill.skill_id == "skillmd-pdf-processing"
    assert (skill.title, skill.pattern) == ("PDF processing", "handling PDF files")
    assert skill.strategy == "Run `pdftotext -layout in.pdf out.txt`."  # the `# title` is not said again
    assert skill.sources == ["skill-md:pdf-processing"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no frontmatter", "must start with YAML frontmatter"),
        ("---\nname: x\n", "not closed"),
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        ("---\nname: Bad_Name\ndescription: d\n---\n", "must be 1-64 of a-z"),
        ("---\nname: other\ndescription: d\n---\n", "must equal its folder name 'skill'"),
        ("---\nname: skill\n---\n", "`description` is missing"),
        ("---\nname: skill\ndescription: d\nauthor: me\n---\n", r"unexpected frontmatter fields \['author'\]"),
        ("---\nname: skill\ndescription: " + "d" * 1025 + "\n---\n", "at most 1024"),
        ("---\nname: skill\ndescription: d\nmetadata:\n  n: 1\n---\n", "map of strings"),
        (
            "---\nname: skill\ndescription: d\nmetadata:\n  confidence: high\n---\n",
            "metadata `confidence` must be a number, not 'high'",
        ),
        (
            "---\nname: skill\ndescription: d\nmetadata:\n  uses: many\n---\n",
            "metadata `uses` must be a whole number, not 'many'",
        ),
        (
            "---\nname: skill\ndescription: d\nmetadata:\n  confidence: '7'\n---\n",
            r"^confidence: Input should be less than or equal to 1$",
        ),
    ],
)
def test_an_invalid_skill_md_is_refused_with_what_to_change(text: str, problem: str) -> None:
    with pytest.raises(InvalidInput, match=problem):
        parse_skill(text, "skill")


def test_one_bad_folder_imports_nothing_and_names_the_file(skills, tmp_path: Path) -> None:
    export_skills(skills, tmp_path / "out")
    bad = tmp_path / "out" / "broken"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: wrong\ndescription: d\n---\n")
    with pytest.raises(SkillFolderImportFailed, match=r"broken/SKILL\.md: `name` 'wrong' must equal") as caught:
        read_skill_folders(tmp_path / "out")
    assert len(caught.value.problems) == 1


def test_a_folder_without_any_skill_md_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"no SKILL\.md there"):
        read_skill_folders(tmp_path)


def test_exporting_into_a_file_path_is_refused(skills, tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    with pytest.raises(InvalidInput, match="is a file"):
        export_skills(skills, target)
