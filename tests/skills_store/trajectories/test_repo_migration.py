"""Stored repo values of the older forms are rewritten to the one repo identity when a store is opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from skills_store.bank import SkillBank
from skills_store.embedders import make_embedder
from skills_store.trajectories.schema import read_repo_renames
from skills_store.trajectories.store import SQLiteTrajectoryStore


def _checkout(root: Path, url: str | None) -> Path:
    (root / ".git").mkdir(parents=True)
    remote = f'[remote "origin"]\n\turl = {url}\n' if url else ""
    (root / ".git" / "config").write_text("[core]\n" + remote)
    return root


def _as_before_the_migration(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 0")
        conn.execute("DELETE FROM repo_renames")


def test_opening_an_old_store_rewrites_repo_to_the_one_identity(tmp_path: Path) -> None:
    db = tmp_path / "home" / "trajectories.db"
    api = _checkout(tmp_path / "api", "git@github.com:acme/api.git")
    local = _checkout(tmp_path / "notes", None)
    gone = tmp_path / "deleted-checkout"
    with SQLiteTrajectoryStore(db) as store:
        hook = store.create(source="claude-code", workspace=str(api), repo="api").trajectory_id  # directory name
        server = store.create(source="mcp:x", workspace=str(api), repo="acme/api").trajectory_id  # already right
        no_remote = store.create(source="mcp:x", workspace=str(local), repo=None).trajectory_id  # server said None
        lost = store.create(source="claude-code", workspace=str(gone), repo="deleted-checkout").trajectory_id
    _as_before_the_migration(db)

    with SQLiteTrajectoryStore(db) as store:
        repos = {tid: store.get(tid).repo for tid in (hook, server, no_remote, lost)}
    assert repos == {hook: "acme/api", server: "acme/api", no_remote: "notes", lost: "deleted-checkout"}
    assert read_repo_renames(db) == {"api": "acme/api"}


def test_the_migration_runs_once(tmp_path: Path) -> None:
    db = tmp_path / "trajectories.db"
    api = _checkout(tmp_path / "api", "git@github.com:acme/api.git")
    with SQLiteTrajectoryStore(db) as store:
        tid = store.create(workspace=str(api), repo="api").trajectory_id
    _as_before_the_migration(db)
    SQLiteTrajectoryStore(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE trajectories SET repo = 'set-by-hand' WHERE id = ?", (tid,))
    with SQLiteTrajectoryStore(db) as store:
        assert store.get(tid).repo == "set-by-hand"  # user_version 1: not migrated again


def test_an_ambiguous_old_name_renames_trajectories_but_not_skills(tmp_path: Path) -> None:
    db = tmp_path / "trajectories.db"
    one = _checkout(tmp_path / "a" / "api", "git@github.com:acme/api.git")
    two = _checkout(tmp_path / "b" / "api", "git@github.com:other/api.git")
    with SQLiteTrajectoryStore(db) as store:
        first = store.create(workspace=str(one), repo="api").trajectory_id
        second = store.create(workspace=str(two), repo="api").trajectory_id
    _as_before_the_migration(db)
    with SQLiteTrajectoryStore(db) as store:
        assert (store.get(first).repo, store.get(second).repo) == ("acme/api", "other/api")
    assert read_repo_renames(db) == {}


def test_skills_distilled_under_the_old_name_are_renamed_when_the_bank_opens(tmp_path: Path, skill_factory) -> None:
    home = tmp_path / "home"
    api = _checkout(tmp_path / "api", "git@github.com:acme/api.git")
    embedder = make_embedder("hash")
    with SkillBank.open(home, embedder) as bank:
        bank.upsert(
            [
                skill_factory("old", "KeyError on a missing key", "KeyError: 'X'", repo="api"),
                skill_factory("other", "KeyError elsewhere", "KeyError: 'Y'", repo="elsewhere"),
            ]
        )
    with SQLiteTrajectoryStore(home / "trajectories.db") as store:
        store.create(source="claude-code", workspace=str(api), repo="api")
    _as_before_the_migration(home / "trajectories.db")
    SQLiteTrajectoryStore(home / "trajectories.db").close()

    with SkillBank.open(home, embedder) as bank:
        assert bank.get("old").repo == "acme/api"
        assert bank.get("other").repo == "elsewhere"
        assert [h.skill.skill_id for h in bank.search("KeyError", 5, repo="acme/api", count_use=False)] == ["old"]
        assert bank.store.get(["old"])[0].repo == "acme/api"  # the record (Chroma) too
