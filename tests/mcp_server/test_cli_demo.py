"""`skillbank demo --home DIR` on a data dir that already holds sessions and skills: the demo reports only its own."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from mcp_server.demo.loop import Steps, read_skills, read_trajectories, show_skills, show_trajectories
from mcp_server.services import open_bank
from mcp_server.settings import Settings
from skills_store.models import Skill, utcnow
from skills_store.trajectories.store import SQLiteTrajectoryStore


def _session(home: Path, task: str) -> str:
    with SQLiteTrajectoryStore(home / "trajectories.db") as store:
        tid = store.create(task=task, source="mcp:someone").trajectory_id
        store.close_trajectory(tid, "success")
    return tid


def _skill(skill_id: str, source: str) -> Skill:
    return Skill(skill_id=skill_id, title=f"Lesson {skill_id}", pattern=f"KeyError {skill_id}", strategy="Check it.",
                 sources=[source])  # fmt: skip


def test_a_home_with_earlier_sessions_shows_only_what_this_run_recorded_and_learned(
    skillbank_home: Path, monkeypatch
) -> None:
    """`--home ~/.local/share/skillbank` listed the user's own sessions as "recorded by the server" and their older
    skills as "lessons learned from the training trajectories"; the check that distillation learned something
    passed on those older skills even when this run learned none."""
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("SKILLBANK_STARTER_SKILLS", "false")
    old = _session(skillbank_home, "the user's own session")
    with open_bank(Settings()) as bank:
        bank.upsert([_skill("sk-old", old)])
    since = utcnow()
    assert read_trajectories(skillbank_home, since) == []
    assert read_skills(skillbank_home, since) == []  # nothing learned yet: the demo's check must fail
    new = _session(skillbank_home, "Task inventory-x")
    with open_bank(Settings()) as bank:
        bank.upsert([_skill("sk-new", new)])
    assert [t.trajectory_id for t in read_trajectories(skillbank_home, since)] == [new]
    assert [s.skill_id for s in read_skills(skillbank_home, since)] == ["sk-new"]
    text = io.StringIO()
    steps = Steps(Console(file=text, width=200))
    show_trajectories(steps, read_trajectories(skillbank_home, since))
    show_skills(steps, read_skills(skillbank_home, since))
    assert "1 trajectories recorded by the server" in text.getvalue()
    assert "1 skill(s) from the training trajectories" in text.getvalue()
    assert old not in text.getvalue()


def test_a_fresh_home_has_nothing_to_show_and_is_left_uncreated(tmp_path: Path) -> None:
    assert read_trajectories(tmp_path, utcnow()) == []
    assert read_skills(tmp_path, utcnow()) == []
    assert list(tmp_path.iterdir()) == []


def test_a_home_built_with_another_embedder_is_refused_before_anything_runs(
    skillbank_home: Path, tmp_path: Path, monkeypatch
) -> None:
    """The demo ran step 1 and 2 (a server that could not open the bank, searching nothing) and failed after ~25 s
    naming `<out>/eval/home` instead of the --home given."""
    from typer.testing import CliRunner

    from mcp_server.cli import build_app

    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("SKILLBANK_STARTER_SKILLS", "false")
    with open_bank(Settings()) as bank:
        bank.upsert([_skill("sk-old", "traj-1")])
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "minilm")
    out = tmp_path / "out"
    result = CliRunner().invoke(build_app(), ["demo", "--out", str(out), "--home", str(skillbank_home)])
    assert result.exit_code == 2, result.output
    assert f"--home {skillbank_home}: its skills were embedded with hash:384" in result.stderr
    assert "all-MiniLM-L6-v2:384" in result.stderr
    assert not out.exists()
