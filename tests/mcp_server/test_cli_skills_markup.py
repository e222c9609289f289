"""Skill and trajectory text is data: rich markup and emoji codes in it print literally, never crash a command."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_server.cli.skills import app
from mcp_server.cli.trajectories import app as trajectories_app
from mcp_server.services import open_bank
from mcp_server.settings import Settings
from skills_store.models import Skill, utcnow
from skills_store.trajectories.store import SQLiteTrajectoryStore

runner = CliRunner()
OLD = utcnow() - timedelta(days=400)
TITLES = {
    "sk-close": "old [/bold] thing",
    "sk-red": "[red]x[/red] red",
    "sk-link": "[link=https://e.x]go[/link]",
    "sk:smile:": "a :smile: b",
}
"""An unmatched closing tag crashed `show` and `prune`; valid markup and emoji codes were silently eaten."""


@pytest.fixture
def home(skillbank_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("SKILLBANK_STARTER_SKILLS", "false")
    skills = [
        Skill(skill_id=sid, title=title, pattern=f"p {title}", strategy=f"s {title}", confidence=0.2,
              sources=["t[/bold]", "[red]t[/red]"], repo="r[/bold]", language="[red]py",
              tags=["c++", "x#"], created_at=OLD, updated_at=OLD)
        for sid, title in TITLES.items()
    ]  # fmt: skip
    bank = open_bank(Settings())
    try:
        bank.upsert([*skills, Skill(skill_id="sk-cand", title="[/] cand [b]", pattern="p", strategy="s",
                                    status="candidate")])  # fmt: skip
    finally:
        bank.close()
    return skillbank_home


@pytest.mark.parametrize("skill_id", sorted(TITLES))
def test_show_prints_titles_sources_and_repo_literally(home: Path, skill_id: str) -> None:
    result = runner.invoke(app, ["show", skill_id])
    assert result.exit_code == 0, result.output
    assert f"{TITLES[skill_id]}  ({skill_id})" in result.output
    assert f"When you see: p {TITLES[skill_id]}" in result.output
    assert f"Do: s {TITLES[skill_id]}" in result.output
    assert "language [red]py, repo r[/bold], tags c++, x#; sources t[/bold], [red]t[/red]" in result.output


@pytest.mark.parametrize(
    "command", [["list"], ["list", "--status", "active"], ["prune"], ["search", "thing red go smile b"]]
)
def test_listing_commands_print_every_title_literally(home: Path, command: list[str]) -> None:
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    for skill_id, title in TITLES.items():
        assert skill_id in result.output
        assert title in result.output


def test_candidates_approve_and_reject_print_the_title_literally(home: Path) -> None:
    listed = runner.invoke(app, ["list", "--status", "candidate"])
    assert listed.exit_code == 0, listed.output
    assert "sk-cand  [/] cand [b]" in listed.output
    approved = runner.invoke(app, ["approve", "sk-cand"])
    assert approved.exit_code == 0, approved.output
    assert "approved sk-cand: [/] cand [b]" in approved.output


def test_trajectory_text_with_markup_prints_literally(skillbank_home: Path) -> None:
    with SQLiteTrajectoryStore(skillbank_home / "trajectories.db") as store:
        tid = store.create(task="fix [/bold] the [red]parser[/red] :smile:").trajectory_id
    listed = runner.invoke(trajectories_app, ["list"])
    shown = runner.invoke(trajectories_app, ["show", tid])
    assert (listed.exit_code, shown.exit_code) == (0, 0), listed.output + shown.output
    assert "fix [/bold] the [red]parser[/red] :smile:" in listed.output
    assert "task: fix [/bold] the [red]parser[/red] :smile:" in shown.output


def test_the_progress_bar_prints_a_model_name_or_path_literally(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_server.cli.common import progress_bar

    with progress_bar() as progress:
        task = progress.add_task("distilling (llm: a[/x] [red]b)", total=1)
        progress.advance(task, 1)
    assert "distilling (llm: a[/x] [red]b)" in capsys.readouterr().err
