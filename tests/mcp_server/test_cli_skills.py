"""`skillbank skills export|import|prune|dedupe` and `skillbank distill` on a real data dir (hash embedder)."""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import typer
from skills_ref.validator import validate as reference_validate
from typer.testing import CliRunner

from mcp_server.cli.distill import distill
from mcp_server.cli.skills import app
from mcp_server.services import open_bank
from mcp_server.settings import Settings
from skills_store.models import EditRewrite, Skill, Step, utcnow
from skills_store.trajectories.store import SQLiteTrajectoryStore

runner = CliRunner()
OLD = utcnow() - timedelta(days=400)


@pytest.fixture
def home(skillbank_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("SKILLBANK_STARTER_SKILLS", "false")
    bank = open_bank(Settings())
    bank.upsert(
        [
            Skill(skill_id="sk-typo", title="NameError: fix a misspelt name", pattern="NameError: name '<name>' is "
                  "not defined", strategy="Rename it.", confidence=0.7, sources=["traj-1"], language="python"),
            Skill(skill_id="sk-stale", title="Stale advice", pattern="OSError: <name>", strategy="Reboot.",
                  confidence=0.2, created_at=OLD, updated_at=OLD),
        ]
    )  # fmt: skip
    bank.close()
    return skillbank_home


def ids(home: Path) -> list[str]:
    bank = open_bank(Settings())
    try:
        return sorted(s.skill_id for s in bank.list_skills())
    finally:
        bank.close()


def test_export_skill_md_writes_valid_folders_that_import_back(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "skills"
    result = runner.invoke(app, ["export", "--format", "skill-md", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 2 SKILL.md folder(s)" in result.output
    folders = sorted(p for p in out.iterdir())
    assert all(reference_validate(f) == [] for f in folders)
    bank = open_bank(Settings())
    bank.delete(["sk-typo", "sk-stale"])
    bank.close()
    result = runner.invoke(app, ["import", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 added, 0 updated" in result.output
    assert ids(home) == ["sk-stale", "sk-typo"]


def test_a_skill_md_import_over_a_stored_skill_keeps_the_fields_the_file_does_not_carry(
    home: Path, tmp_path: Path
) -> None:
    bank = open_bank(Settings())
    [typo] = [s for s in bank.list_skills() if s.skill_id == "sk-typo"]
    bank.upsert([typo.model_copy(update={"rule": [EditRewrite(before="prnt(", after="print(")]})])
    bank.close()
    out = tmp_path / "skills"
    assert runner.invoke(app, ["export", "--format", "skill-md", "--out", str(out)]).exit_code == 0
    [skill_md] = [f / "SKILL.md" for f in out.iterdir() if "sk-typo" in (f / "SKILL.md").read_text()]
    older = "".join(  # what an export written before rule, status and the dates were kept looks like
        line
        for line in skill_md.read_text().splitlines(keepends=True)
        if not line.lstrip().startswith(("rule:", "status:", "created_at:", "updated_at:"))
    )
    skill_md.write_text(older.replace("Rename it.", "Rename it to the defined name."))
    result = runner.invoke(app, ["import", str(skill_md.parent)])
    assert result.exit_code == 0, result.output
    assert "1 updated" in result.output
    bank = open_bank(Settings())
    [after] = [s for s in bank.list_skills() if s.skill_id == "sk-typo"]
    bank.close()
    assert after.strategy == "Rename it to the defined name."
    assert [(r.before, r.after) for r in after.rule] == [("prnt(", "print(")]
    assert after.created_at == typo.created_at


def test_re_exporting_skill_md_removes_its_stale_folders_and_keeps_hand_written_skills(
    home: Path, tmp_path: Path
) -> None:
    """A retitled skill got a second folder under its new name, the old one kept the old text under the same
    skill_id (agents read both, and importing the folder failed on the duplicate id); a deleted skill stayed
    published."""
    out = tmp_path / "skills"
    assert runner.invoke(app, ["export", "--format", "skill-md", "--out", str(out)]).exit_code == 0
    hand = out / "my-own-skill"
    hand.mkdir()
    (hand / "SKILL.md").write_text("---\nname: my-own-skill\ndescription: 'Mine. Use when you see: X.'\n---\n\nDo Y.\n")
    [stale_folder] = [f for f in out.iterdir() if "sk-stale" in (f / "SKILL.md").read_text()]
    (stale_folder / "notes.txt").write_text("the user's own file")
    bank = open_bank(Settings())
    [typo] = [s for s in bank.list_skills() if s.skill_id == "sk-typo"]
    bank.upsert([typo.model_copy(update={"title": "NameError: a name that is not defined"})])
    bank.delete(["sk-stale"])
    bank.close()
    result = runner.invoke(app, ["export", "--format", "skill-md", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 1 SKILL.md folder(s)" in result.output
    assert "removed 2 stale one(s)" in result.output
    published = sorted(f.name for f in out.iterdir() if (f / "SKILL.md").is_file())
    assert published == ["my-own-skill", next(f.name for f in out.iterdir() if f.name.startswith("nameerror-a-name"))]
    assert (stale_folder / "notes.txt").read_text() == "the user's own file"
    assert not (stale_folder / "SKILL.md").exists()
    result = runner.invoke(app, ["import", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 skill(s)" in result.output


@pytest.mark.parametrize(("agent", "where"), [("claude", ".claude/skills"), ("codex", ".agents/skills")])
def test_export_for_an_agent_writes_where_it_reads_project_skills(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str, where: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["export", "--for", agent, "--min-confidence", "0.5"])
    assert result.exit_code == 0, result.output
    [folder] = list((tmp_path / where).iterdir())
    assert (folder / "SKILL.md").read_text().startswith(f"---\nname: {folder.name}\n")


def test_export_for_cline_writes_under_the_home_directory(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert runner.invoke(app, ["export", "--for", "cline"]).exit_code == 0
    assert len(list((tmp_path / "user" / ".cline" / "skills").iterdir())) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "--format", "skill-md"], "pass --out DIR or --for claude|codex|cline"),
        (["export", "--for", "claude", "--out", "x"], "give --out DIR or --for AGENT, not both"),
    ],
)
def test_export_arguments_that_cannot_work_are_refused(home: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output


def test_import_of_a_bad_skill_folder_names_the_problem_and_imports_nothing(home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "mine"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: other\ndescription: d\n---\nbody\n")
    result = runner.invoke(app, ["import", str(bad)])
    assert result.exit_code == 2
    assert "must equal its folder name 'mine'" in result.output
    assert ids(home) == ["sk-stale", "sk-typo"]


def test_prune_is_a_dry_run_by_default_with_a_report(home: Path) -> None:
    result = runner.invoke(app, ["prune"])
    assert result.exit_code == 0, result.output
    assert "sk-stale" in result.output
    assert "1 skill(s) would be pruned (confidence < 0.5 and unused for 90 days)" in result.output
    assert ids(home) == ["sk-stale", "sk-typo"]


def test_prune_apply_archives_then_removes(home: Path, tmp_path: Path) -> None:
    archive = tmp_path / "pruned.jsonl"
    result = runner.invoke(app, ["prune", "--apply", "--archive", str(archive)])
    assert result.exit_code == 0, result.output
    assert f"pruned 1 skill(s) (confidence < 0.5 and unused for 90 days); archived to {archive}" in result.output
    assert ids(home) == ["sk-typo"]
    assert json.loads(archive.read_text())["skill_id"] == "sk-stale"


@pytest.mark.parametrize("command", ["prune", "dedupe"])
@pytest.mark.parametrize("name", ["catalog.db", "trajectories.db", "chroma/archive.jsonl"])
def test_an_archive_inside_the_store_is_refused_and_nothing_is_pruned(home: Path, command: str, name: str) -> None:
    """`--archive <home>/catalog.db` appended the JSONL to the live database; the default `archive/` folder is fine."""
    before = (home / "catalog.db").read_bytes()
    result = runner.invoke(app, [command, "--apply", "--archive", str(home / name)])
    assert result.exit_code == 2, result.output
    assert "is inside the data dir" in result.output
    assert ids(home) == ["sk-stale", "sk-typo"]
    assert (home / "catalog.db").read_bytes() == before
    ok = runner.invoke(app, ["prune", "--apply", "--archive", str(home / "archive" / "mine.jsonl")])
    assert ok.exit_code == 0, ok.output
    assert ids(home) == ["sk-typo"]


def test_prune_respects_a_longer_period(home: Path) -> None:
    result = runner.invoke(app, ["prune", "--apply", "--days", "500"])
    assert "pruned 0 skill(s)" in result.output
    assert ids(home) == ["sk-stale", "sk-typo"]


def test_dedupe_reports_then_merges_copies(home: Path, skill_factory) -> None:
    bank = open_bank(Settings())
    bank.upsert([skill_factory("sk-copy", "NameError: fix a misspelt name", "NameError: name '<name>' is not defined",
                               "Rename it.", confidence=0.7, sources=["traj-2"], language="python")])  # fmt: skip
    bank.close()
    dry = runner.invoke(app, ["dedupe"])
    assert "would merge 1 duplicate(s)" in dry.output
    assert len(ids(home)) == 3
    done = runner.invoke(app, ["dedupe", "--apply"])
    assert done.exit_code == 0, done.output
    assert "merged 1 duplicate(s); copies archived to" in done.output
    bank = open_bank(Settings())
    try:
        [kept] = [s for s in bank.list_skills() if s.skill_id in ("sk-typo", "sk-copy")]
    finally:
        bank.close()
    assert sorted(kept.sources) == ["traj-1", "traj-2"]


def test_dedupe_in_a_pipe_prints_only_its_result(home: Path) -> None:
    result = runner.invoke(app, ["dedupe"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "would merge 0 duplicate(s)\n"
    assert result.stderr == ""


def test_torch_threads_are_capped_to_the_cores_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from mcp_server.cli.common import cap_torch_threads

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert cap_torch_threads() == 1
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    monkeypatch.delitem(sys.modules, "torch")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cap_torch_threads()
    assert os.environ["OMP_NUM_THREADS"] == "1"  # read by torch when it starts


# -- skillbank distill ----------------------------------------------------------------------------------------

distill_app = typer.Typer()
distill_app.command()(distill)


def record_fix(home: Path) -> str:
    message = "NameError: name 'itms' is not defined\n\nshop.py:2: NameError"
    patch = "--- a/shop.py\n+++ b/shop.py\n@@ -1,2 +1,2 @@\n def total(items):\n-    return itms\n+    return items\n"
    with SQLiteTrajectoryStore(home / "trajectories.db") as store:
        tid = store.create(task="fix total").trajectory_id
        store.append(
            tid,
            [
                Step(kind="tool_call", tool="run_tests", ok=False, args={"tests": None}, result={
                     "status": "failed", "failing": ["t::a"], "failures": [{"id": "t::a", "message": message}]}),
                Step(kind="tool_call", tool="apply_patch", ok=True, args={"patch": patch, "dry_run": False},
                     result={"applied": True, "files": ["modify shop.py"], "fuzzy": False}),
                Step(kind="tool_call", tool="run_tests", ok=True, args={"tests": None}, result={"status": "passed"}),
                # the agent says it applied the skill (record_trajectory(used_skills=...)): only then it moves
                Step(kind="tool_call", tool="record_trajectory", ok=True, result={"used_skills": ["sk-typo"]}),
            ],
        )  # fmt: skip
        store.link_skills(tid, ["sk-typo"])
        store.close_trajectory(tid, "success")
    return tid


def test_distill_counts_outcomes_and_distils_new_trajectories(home: Path) -> None:
    tid = record_fix(home)
    result = runner.invoke(distill_app, [])
    assert result.exit_code == 0, result.output
    assert "outcomes: 1 closed trajectories counted, 1 skill(s) moved" in result.output
    assert "heuristic: 1 trajectories distilled into 1 draft(s)" in result.output
    bank = open_bank(Settings())
    try:
        assert bank.get("sk-typo").successes == 1
        assert any(tid in s.sources for s in bank.list_skills())
    finally:
        bank.close()
    again = runner.invoke(distill_app, [])
    assert "heuristic: 0 trajectories distilled" in again.output


def test_distill_with_a_model_but_no_key_says_which_variable_to_set(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_fix(home)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    result = runner.invoke(distill_app, ["--llm", "openai:gpt-4o"])
    assert result.exit_code == 2
    assert "OPENAI_API_KEY is not set" in result.output


def test_distill_without_any_trajectory_says_how_to_get_some(home: Path) -> None:
    result = runner.invoke(distill_app, [])
    assert result.exit_code == 0
    assert "nothing to distill: no trajectories under" in result.output
    assert "`skillbank serve` records them" in result.output


@pytest.mark.parametrize(
    "args",
    [["--out", "chroma/chroma.sqlite3"], ["--out", "catalog.db"], ["--format", "skill-md", "--out", "chroma"]],
)
def test_export_into_the_data_dir_is_refused_and_the_bank_is_untouched(home: Path, args: list[str]) -> None:
    args = [str(home / a) if a.startswith(("chroma", "catalog")) else a for a in args]
    files = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    result = runner.invoke(app, ["export", *args])
    assert result.exit_code == 2, result.output
    assert "inside the data dir" in result.output
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == files
    assert ids(home) == ["sk-stale", "sk-typo"]


def test_reindex_rebuilds_a_lost_catalog_from_the_chroma_store(home: Path) -> None:
    """The README's promise: catalog.db is rebuilt from Chroma by `skills reindex`; it said 'no skill bank yet'."""
    for path in home.glob("catalog.db*"):
        path.unlink()
    result = runner.invoke(app, ["reindex"])
    assert result.exit_code == 0, result.output
    assert "reindexed 2 skill(s)" in result.output
    listed = runner.invoke(app, ["list"])
    assert sorted(row.split("\t")[0] for row in listed.stdout.splitlines()) == ["sk-stale", "sk-typo"]


def test_reindex_on_a_fresh_home_creates_nothing(skillbank_home: Path) -> None:
    result = runner.invoke(app, ["reindex"])
    assert result.exit_code == 0
    assert "no skill bank" in result.output
    assert not (skillbank_home / "catalog.db").exists()
