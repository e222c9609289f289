"""`skillbank skills list --status candidate | approve | reject` on a real data dir (hash embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_server.cli.skills import _table, app
from mcp_server.services import open_bank
from mcp_server.settings import Settings
from skills_store.models import EditRewrite, Skill

runner = CliRunner()


@pytest.fixture
def home(skillbank_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("SKILLBANK_STARTER_SKILLS", "false")
    with open_bank(Settings()) as bank:
        bank.upsert(
            [
                Skill(skill_id="sk-cand", title="AttributeError: replace `time.clock()` with `time.perf_counter()`",
                      pattern="AttributeError: module 'time' has no attribute 'clock'",
                      strategy="Rule: `time.clock()` -> `time.perf_counter()`\nExamples:\n- `t = time.clock()` in "
                      "`timer.py` (traj-a)", rule=[EditRewrite(before="time.clock()", after="time.perf_counter()")],
                      sources=["traj-a", "traj-b"], status="candidate"),
                Skill(skill_id="sk-live", title="Missing key", pattern="KeyError: '<key>'", strategy="Use .get."),
            ]
        )  # fmt: skip
    return skillbank_home


def statuses() -> dict[str, str]:
    with open_bank(Settings()) as bank:
        return {s.skill_id: s.status for s in bank.list_skills()}


def test_list_of_candidates_shows_their_evidence(home: Path) -> None:
    result = runner.invoke(app, ["list", "--status", "candidate"])
    assert result.exit_code == 0, result.output
    assert "sk-cand" in result.output
    assert "sk-live" not in result.output
    assert "rule: `time.clock()` -> `time.perf_counter()`" in result.output
    assert "sources: traj-a, traj-b" in result.output
    assert "`timer.py` (traj-a)" in result.output


def test_list_of_active_skills_leaves_candidates_out(home: Path) -> None:
    result = runner.invoke(app, ["list", "--status", "active"])
    assert result.exit_code == 0, result.output
    assert "sk-live" in result.output
    assert "sk-cand" not in result.output


def test_approve_makes_a_candidate_active(home: Path) -> None:
    result = runner.invoke(app, ["approve", "sk-cand"])
    assert result.exit_code == 0, result.output
    assert "approved sk-cand" in result.output
    assert statuses() == {"sk-cand": "active", "sk-live": "active"}


def test_reject_deletes_a_candidate(home: Path) -> None:
    result = runner.invoke(app, ["reject", "sk-cand"])
    assert result.exit_code == 0, result.output
    assert statuses() == {"sk-live": "active"}


def test_unknown_ids_and_rejecting_an_active_skill_are_input_errors(home: Path) -> None:
    for args in (["approve", "sk-nope"], ["reject", "sk-nope"], ["reject", "sk-live"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
    assert statuses() == {"sk-cand": "candidate", "sk-live": "active"}


def test_approve_on_a_fresh_home_creates_nothing(skillbank_home: Path) -> None:
    result = runner.invoke(app, ["approve", "sk-x"])
    assert result.exit_code == 2
    assert list(skillbank_home.iterdir()) == []


def test_the_table_marks_candidates(home: Path) -> None:
    with open_bank(Settings()) as bank:
        rows = _table(bank.list_skills(), 200)
    assert any("sk-cand" in row and "(candidate) AttributeError" in row for row in rows)
    assert not any("sk-live" in row and "(candidate)" in row for row in rows)


def test_search_shows_relevance_and_never_a_candidate(home: Path) -> None:
    found = runner.invoke(app, ["search", "KeyError: 'qty'"])
    assert found.exit_code == 0, found.output
    assert "relevance " in found.output
    assert "sk-cand" not in found.output


def test_agent_skills_export_leaves_candidates_out_and_jsonl_keeps_them(home: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "--format", "skill-md", "--out", str(tmp_path / "md")])
    assert result.exit_code == 0, result.output
    assert "wrote 1 SKILL.md folder(s)" in result.output
    jsonl = runner.invoke(app, ["export", "--out", "-"])
    assert '"status":"candidate"' in jsonl.output.replace(" ", "")
