"""A data dir missing or damaged in part. A database damaged inside (a page in the middle; its header, which
opening it reads, intact) is found only when a command reads that page: the command ends with the same one-line
error and fix as a damaged file found on open, exit 2, not a traceback. A catalog gone beside its Chroma record is
no empty bank."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from mcp_server.cli.skills import app as skills_app
from mcp_server.cli.trajectories import app as trajectories_app
from skills_store.bank import SkillBank
from skills_store.catalog import Catalog
from skills_store.embedders import make_embedder
from skills_store.models import Skill, Step
from skills_store.trajectories.store import SQLiteTrajectoryStore

runner = CliRunner()


def _damage(path: Path, at: int, size: int) -> None:
    with path.open("r+b") as f:
        f.seek(at)
        f.write(os.urandom(size))


def test_a_catalog_damaged_inside_is_named_with_its_fix(skillbank_home: Path) -> None:
    with Catalog(skillbank_home / "catalog.db") as catalog:
        skills = [Skill(skill_id=f"sk-{i}", title=f"T{i}", pattern=f"ValueError: {i}", strategy="x" * 500)
                  for i in range(300)]  # fmt: skip
        catalog.upsert(skills, None)
    _damage(skillbank_home / "catalog.db", 65_536, 16_384)
    result = runner.invoke(skills_app, ["list"])
    assert result.exit_code == 2, result.output
    assert f"the skill catalog {skillbank_home / 'catalog.db'} is unreadable or corrupt" in result.output
    assert "run `skillbank skills reindex`" in result.output
    assert "Traceback" not in result.output


def test_a_trajectory_store_damaged_inside_is_named_with_its_fix(skillbank_home: Path) -> None:
    with SQLiteTrajectoryStore(skillbank_home / "trajectories.db") as store:
        for _ in range(50):
            tid = store.create(task="t").trajectory_id
            store.append(tid, [Step(kind="message", content="y" * 3000) for _ in range(5)])
            store.close_trajectory(tid, "success")
    _damage(skillbank_home / "trajectories.db", 8192, 8192)
    result = runner.invoke(trajectories_app, ["list"])
    assert result.exit_code == 2, result.output
    assert f"the trajectory store {skillbank_home / 'trajectories.db'} is corrupt" in result.output
    assert "Traceback" not in result.output


def test_a_missing_catalog_beside_the_chroma_record_is_no_empty_bank(
    skillbank_home: Path, monkeypatch, skill_factory
) -> None:
    """It was "no skill bank at ... yet", exit 0: the skills were all still in chroma/."""
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    bank = SkillBank.open(skillbank_home, make_embedder("hash"))
    bank.upsert([skill_factory("zero", "Division by zero", "ZeroDivisionError: division by zero")])
    bank.close()
    for name in ("catalog.db", "catalog.db-wal", "catalog.db-shm"):
        (skillbank_home / name).unlink(missing_ok=True)
    listed = runner.invoke(skills_app, ["list"])
    assert listed.exit_code == 2
    assert f"the skill catalog {skillbank_home / 'catalog.db'} is missing while" in listed.output
    assert "run `skillbank skills reindex`" in listed.output
    assert runner.invoke(skills_app, ["reindex"]).exit_code == 0
    again = runner.invoke(skills_app, ["list"])
    assert again.exit_code == 0
    assert again.output.startswith("zero\tDivision by zero")
