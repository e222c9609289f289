"""`skillbank skills import|export|list|show|search` with JSONL, through the real CLI on a temp data dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_server.cli import build_app

runner = CliRunner()


@pytest.fixture
def home(skillbank_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("SKILLBANK_STARTER_SKILLS", "false")
    return skillbank_home


def line(**fields: object) -> str:
    base = {"skill_id": "sk-1", "title": "Missing module", "pattern": "ModuleNotFoundError: No module named 'X'",
            "strategy": "Install it.", "confidence": 0.7, "tags": ["python"], "language": "python"}  # fmt: skip
    return json.dumps({**base, **fields})


def test_import_then_list_show_search_and_export_round_trip(home: Path, tmp_path: Path) -> None:
    source = tmp_path / "skills.jsonl"
    source.write_text(line() + "\n\n" + line(skill_id="sk-2", title="KeyError", pattern="KeyError: 'k'") + "\n")
    app = build_app()
    imported = runner.invoke(app, ["skills", "import", str(source)])
    assert imported.exit_code == 0, imported.output
    assert "imported 2 skill(s)" in imported.output
    assert "2 added, 0 updated" in imported.output
    listed = runner.invoke(app, ["skills", "list", "--json"])
    assert sorted(json.loads(x)["skill_id"] for x in listed.output.splitlines()) == ["sk-1", "sk-2"]
    shown = json.loads(runner.invoke(app, ["skills", "show", "sk-2", "--json"]).output)
    assert shown["pattern"] == "KeyError: 'k'"
    assert "sk-2" in runner.invoke(app, ["skills", "search", "KeyError: 'user'", "-k", "1"]).output
    out = tmp_path / "export.jsonl"
    assert runner.invoke(app, ["skills", "export", "--format", "jsonl", "--out", str(out)]).exit_code == 0
    exported = {json.loads(x)["skill_id"]: json.loads(x) for x in out.read_text().splitlines()}
    assert set(exported) == {"sk-1", "sk-2"}
    assert exported["sk-1"]["strategy"] == "Install it."


def test_a_file_with_bad_lines_imports_nothing_and_names_every_bad_line(home: Path, tmp_path: Path) -> None:
    app = build_app()
    first = tmp_path / "first.jsonl"
    first.write_text(line() + "\n")
    assert runner.invoke(app, ["skills", "import", str(first)]).exit_code == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join(
            [
                line(skill_id="sk-new"),
                "{not json",
                line(skill_id="sk-3", confidence=1.5),
                json.dumps({"skill_id": "sk-4", "pattern": "p", "strategy": "s"}),
                line(skill_id="sk-new"),
            ]
        )
    )
    result = runner.invoke(app, ["skills", "import", str(bad)])
    assert result.exit_code == 2
    assert "line 2: not valid JSON" in result.output
    assert "line 3: confidence: Input should be less than or equal to 1" in result.output
    assert "line 4: title: Field required" in result.output
    assert "line 5: skill_id 'sk-new' already appears on line 1" in result.output
    assert "Traceback" not in result.output
    listed = runner.invoke(app, ["skills", "list", "--json"]).output.splitlines()
    assert [json.loads(x)["skill_id"] for x in listed] == ["sk-1"]


def test_a_line_that_leaves_fields_out_keeps_the_stored_values(home: Path, tmp_path: Path) -> None:
    app = build_app()
    full = tmp_path / "full.jsonl"
    full.write_text(line(sources=["traj-9"]) + "\n")
    runner.invoke(app, ["skills", "import", str(full)])
    partial = tmp_path / "partial.jsonl"
    fields = {"skill_id": "sk-1", "title": "Missing module", "pattern": "ModuleNotFoundError"}
    partial.write_text(json.dumps({**fields, "strategy": "Install it with the interpreter that runs the code."}) + "\n")
    result = runner.invoke(app, ["skills", "import", str(partial)])
    assert "0 added, 1 updated" in result.output
    shown = json.loads(runner.invoke(app, ["skills", "show", "sk-1", "--json"]).output)
    assert shown["strategy"] == "Install it with the interpreter that runs the code."
    assert shown["sources"] == ["traj-9"]
    assert shown["tags"] == ["python"]


def test_a_fresh_home_lists_exports_and_searches_nothing_and_creates_nothing(home: Path) -> None:
    app = build_app()
    for command in (["list"], ["list", "--json"], ["export"], ["search", "KeyError"], ["prune"], ["dedupe"]):
        result = runner.invoke(app, ["skills", *command])
        assert result.exit_code == 0, (command, result.output)
        assert result.stdout == "", command
        assert "no skill bank at" in result.stderr
        assert "skills import FILE` creates one" in result.stderr
    for command in ("show", "approve", "reject"):
        shown = runner.invoke(app, ["skills", command, "sk-1"])
        assert shown.exit_code == 2
        # One line: the error says there is no bank yet and how one is made (no notice before it saying it again).
        assert shown.stderr.count("no skill bank at") == 1, shown.stderr
        assert "no skill with id 'sk-1': no skill bank at" in shown.stderr
        assert "skills import FILE` creates one" in shown.stderr
    missing = runner.invoke(app, ["skills", "import", "/nonexistent/file.jsonl"])
    assert missing.exit_code == 2
    assert "no such file" in missing.output
    assert list(home.iterdir()) == []


def test_an_export_on_a_fresh_home_leaves_an_earlier_export_at_out_as_it_was(home: Path, tmp_path: Path) -> None:
    """A home with no bank (an unset or mistyped SKILLBANK_HOME) truncated the backup named by --out to 0 bytes
    ("wrote 0 skill(s)"), and a skill-md export there would have unpublished every skill of the folder."""
    backup = tmp_path / "backup.jsonl"
    backup.write_text(line() + "\n")
    published = tmp_path / "skills" / "missing-module-0123abcd"
    published.mkdir(parents=True)
    (published / "SKILL.md").write_text("---\nname: missing-module-0123abcd\nmetadata:\n  generator: skillbank\n---\n")
    app = build_app()
    for command in (["--out", str(backup)], ["--format", "skill-md", "--out", str(tmp_path / "skills")]):
        result = runner.invoke(app, ["skills", "export", *command])
        assert result.exit_code == 0, result.output
        assert result.stdout == ""
        assert "no skill bank at" in result.stderr
    assert backup.read_text() == line() + "\n"
    assert (published / "SKILL.md").is_file()
    assert list(home.iterdir()) == []


@pytest.mark.parametrize(
    "content",
    [
        "{not json\n",
        line(confidence=7) + "\n",
        json.dumps({"skill_id": "sk-9", "title": "t", "pattern": "p", "strategy": "x" * 2_000_000}) + "\n",
    ],
    ids=["bad JSON", "bad field", "a 2 MB line"],
)
def test_a_refused_import_on_a_fresh_home_creates_and_seeds_nothing(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    monkeypatch.setenv("SKILLBANK_STARTER_SKILLS", "true")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(line(skill_id="sk-ok") + "\n" + content)
    result = runner.invoke(build_app(), ["skills", "import", str(bad)])
    assert result.exit_code == 2, result.output
    assert "line 2:" in result.stderr
    assert list(home.iterdir()) == []  # no store opened: no model loaded, nothing seeded


def test_on_a_fresh_home_a_line_may_name_only_some_fields_of_a_starter_skill(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skills_store.starter import load_starter_pack

    monkeypatch.setenv("SKILLBANK_STARTER_SKILLS", "true")
    starter = load_starter_pack()[0]
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps({"skill_id": starter.skill_id, "tags": ["python", "reviewed"]}) + "\n")
    app = build_app()
    result = runner.invoke(app, ["skills", "import", str(partial)])
    assert result.exit_code == 0, result.output
    shown = json.loads(runner.invoke(app, ["skills", "show", starter.skill_id, "--json"]).stdout)
    assert shown["tags"] == ["python", "reviewed"]
    assert shown["strategy"] == starter.strategy


def test_list_in_a_pipe_prints_whole_ids_one_skill_a_line(home: Path, tmp_path: Path) -> None:
    long_id = "starter-attribute-error-on-none-returned-by-a-function-that-found-nothing-to-return"
    source = tmp_path / "skills.jsonl"
    source.write_text(line(skill_id=long_id, title="A title\twith a tab " + "and words " * 12) + "\n" + line() + "\n")
    app = build_app()
    assert runner.invoke(app, ["skills", "import", str(source)]).exit_code == 0
    listed = runner.invoke(app, ["skills", "list"])
    assert listed.exit_code == 0
    rows = [row.split("\t") for row in listed.stdout.splitlines()]
    assert sorted(r[0] for r in rows) == ["sk-1", long_id]
    assert all(len(r) == 6 for r in rows)
    assert "…" not in listed.stdout
    assert runner.invoke(app, ["skills", "show", rows[0][0]]).exit_code == 0


def test_the_terminal_table_never_cuts_an_id_even_when_narrow() -> None:
    from mcp_server.cli.skills import _table
    from skills_store.models import Skill

    long_id = "starter-attribute-error-on-none-returned-by-a-function"
    skill = Skill(skill_id=long_id, title="AttributeError: 'NoneType' object has no attribute 'x'", pattern="p",
                  strategy="s", confidence=0.5, tags=["python", "none"], language="python")  # fmt: skip
    header, row = _table([skill], 90)  # 18 columns left: the title keeps them, the tags give way
    assert row.startswith(long_id + "  0.50     0  python    AttributeEr")
    assert len(row) == 90
    assert row.endswith("…")
    assert header.endswith("language  title")
    wide = _table([skill], 160)[1]
    assert wide == long_id + "  0.50     0  python    python,none           " + skill.title
    assert _table([skill], 30)[1].startswith(long_id)  # narrower than the id: the id still whole
    assert header.startswith("skill_id" + " " * (len(long_id) - 8) + "  conf  uses  language")
    assert _table([skill], 200)[1].endswith("AttributeError: 'NoneType' object has no attribute 'x'")


def test_an_80_column_terminal_shows_titles_next_to_the_starter_packs_ids() -> None:
    from mcp_server.cli.skills import _table
    from skills_store.models import Skill

    skill = Skill(skill_id="x" * 47, title="ModuleNotFoundError: install the missing package", pattern="p",
                  strategy="s", confidence=0.5, tags=["python"], language="python")  # fmt: skip
    row = _table([skill], 80)[1]
    assert len(row) <= 80
    assert "  python    ModuleNo" in row
    assert _table([skill], 200)[1].endswith("python                ModuleNotFoundError: install the missing package")


def test_export_to_an_unwritable_place_is_a_clean_error(home: Path, tmp_path: Path) -> None:
    app = build_app()
    source = tmp_path / "skills.jsonl"
    source.write_text(line() + "\n")
    runner.invoke(app, ["skills", "import", str(source)])
    result = runner.invoke(app, ["skills", "export", "--out", str(tmp_path / "missing-dir" / "out.jsonl")])
    assert result.exit_code == 2
    assert "No such file or directory" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("SKILLBANK_PRUNE_UNUSED_DAYS", "0", "stdin has no hook_event_name"),  # not the hook's: the event is read
        ("SKILLBANK_SUGGEST_THRESHOLD", "2", "invalid settings: SKILLBANK_SUGGEST_THRESHOLD"),
    ],
)
def test_the_claude_hook_with_bad_settings_exits_1_with_a_message_not_2_nor_a_traceback(
    tmp_path: Path, variable: str, value: str, message: str
) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "SKILLBANK_HOME": str(tmp_path), variable: value}
    out = subprocess.run(
        [sys.executable, "-m", "mcp_server", "hook", "claude"], input="{}", env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 1  # 2 would be a blocking error for Claude Code
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_secrets_in_imported_skills_are_redacted_before_storage(home: Path, tmp_path: Path) -> None:
    app = build_app()
    key = "sk-ant-api03-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5uVw8x"
    source = tmp_path / "leaky.jsonl"
    source.write_text(line(strategy=f"Set ANTHROPIC_API_KEY={key} and retry.") + "\n")
    assert runner.invoke(app, ["skills", "import", str(source)]).exit_code == 0
    shown = runner.invoke(app, ["skills", "show", "sk-1", "--json"]).output
    assert key not in shown
    assert "[REDACTED:" in json.loads(shown)["strategy"]
    exported = runner.invoke(app, ["skills", "export"]).output
    assert key not in exported


def test_a_line_naming_only_some_fields_of_a_stored_skill_updates_just_those(home: Path, tmp_path: Path) -> None:
    app = build_app()
    full = tmp_path / "full.jsonl"
    full.write_text(line() + "\n")
    runner.invoke(app, ["skills", "import", str(full)])
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps({"skill_id": "sk-1", "confidence": 0.9}) + "\n")
    result = runner.invoke(app, ["skills", "import", str(partial)])
    assert result.exit_code == 0, result.output
    shown = json.loads(runner.invoke(app, ["skills", "show", "sk-1", "--json"]).output)
    assert shown["confidence"] == 0.9
    assert shown["title"] == "Missing module"
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps({"skill_id": "sk-new", "confidence": 0.9}) + "\n")
    refused = runner.invoke(app, ["skills", "import", str(unknown)])
    assert refused.exit_code == 2
    assert "line 1: title: Field required" in refused.output


def test_list_filters_ignore_case_and_spaces_and_refuse_unknown_values(home: Path, tmp_path: Path) -> None:
    """As `search_skills` reads them: `--language PYTHON` listed nothing, `--language pyhton` too, with exit 0."""
    source = tmp_path / "skills.jsonl"
    source.write_text(
        line(skill_id="sk-py", language="python", repo="acme/shop", tags=["db"]) + "\n"
        + line(skill_id="sk-js", language="javascript") + "\n"
    )  # fmt: skip
    app = build_app()
    assert runner.invoke(app, ["skills", "import", str(source)]).exit_code == 0
    for args in (["--language", " PYTHON "], ["--repo", "ACME/SHOP"], ["--tag", "DB"]):
        listed = runner.invoke(app, ["skills", "list", *args])
        assert listed.exit_code == 0, listed.output
        assert [row.split("\t")[0] for row in listed.stdout.splitlines()] == ["sk-py"]
    wrong = runner.invoke(app, ["skills", "list", "--language", "pyhton"])
    assert wrong.exit_code == 2
    assert "unknown language 'pyhton'" in wrong.output
    assert "python" in wrong.output


def test_a_jsonl_file_with_a_utf8_bom_imports(home: Path, tmp_path: Path) -> None:
    """PowerShell 5's `Out-File -Encoding utf8` writes one: line 1 was refused as 'Unexpected UTF-8 BOM'."""
    source = tmp_path / "skills.jsonl"
    source.write_text("\ufeff" + line() + "\n", encoding="utf-8")
    app = build_app()
    result = runner.invoke(app, ["skills", "import", str(source)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["skills", "list"]).stdout.startswith("sk-1\t")


def test_a_line_without_a_skill_id_imported_twice_is_one_skill(home: Path, tmp_path: Path) -> None:
    source = tmp_path / "skills.jsonl"
    record = json.loads(line())
    del record["skill_id"]
    source.write_text(json.dumps(record) + "\n")
    app = build_app()
    for _ in range(3):
        result = runner.invoke(app, ["skills", "import", str(source)])
        assert result.exit_code == 0, result.output
    rows = runner.invoke(app, ["skills", "list"]).stdout.splitlines()
    assert len(rows) == 1
    assert rows[0].startswith("sk-")


def test_numbers_must_be_json_numbers_not_strings_or_booleans(home: Path, tmp_path: Path) -> None:
    app = build_app()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join(
            [
                line(skill_id="sk-a", confidence="0.5"),
                line(skill_id="sk-b", confidence=True),
                line(skill_id="sk-c", uses=2.5),
                line(skill_id="sk-d", successes="3"),
                line(skill_id="sk-e", confidence=1, uses=4),
            ]
        )
    )
    result = runner.invoke(app, ["skills", "import", str(bad)])
    assert result.exit_code == 2, result.output
    assert "line 1: confidence: Input should be a valid number" in result.output
    assert "line 2: confidence: Input should be a valid number" in result.output
    assert "line 3: uses: Input should be a valid integer" in result.output
    assert "line 4: successes: Input should be a valid integer" in result.output
    assert "line 5" not in result.output  # an integer is a valid confidence
    assert "no skill bank" in runner.invoke(app, ["skills", "list", "--json"]).output  # nothing was created
    good = tmp_path / "good.jsonl"
    good.write_text(line(skill_id="sk-e", confidence=1, uses=4, created_at="2026-01-02T03:04:05Z") + "\n")
    assert runner.invoke(app, ["skills", "import", str(good)]).exit_code == 0
    shown = json.loads(runner.invoke(app, ["skills", "show", "sk-e", "--json"]).output)
    assert (shown["confidence"], shown["uses"], shown["created_at"][:19]) == (1.0, 4, "2026-01-02T03:04:05")


@pytest.mark.parametrize("query", ["", "   ", "\u200b\n\t"])
def test_a_blank_search_is_refused_as_search_skills_refuses_it(home: Path, tmp_path: Path, query: str) -> None:
    """The CLI answered five arbitrary skills (relevance 0.01-0.03) where the MCP tool refuses a blank query."""
    source = tmp_path / "skills.jsonl"
    source.write_text(line() + "\n")
    app = build_app()
    assert runner.invoke(app, ["skills", "import", str(source)]).exit_code == 0
    result = runner.invoke(app, ["skills", "search", query])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert "the query is blank" in result.stderr
