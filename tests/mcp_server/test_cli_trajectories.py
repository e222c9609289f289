"""`skillbank trajectories list | show | export | close-stale` on a real store under SKILLBANK_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mcp_server.cli.distill import distill
from mcp_server.cli.trajectories import app
from skills_store.models import Step
from skills_store.trajectories.store import SQLiteTrajectoryStore

runner = CliRunner()


@pytest.fixture
def filled(skillbank_home: Path) -> dict[str, str]:
    with SQLiteTrajectoryStore(skillbank_home / "trajectories.db") as store:
        done = store.create(task="fix the parser", source="mcp:agent").trajectory_id
        store.append(
            done,
            [
                Step(kind="thought", content="check parse()"),
                Step(kind="tool_call", tool="run_tests", args={"tests": []}, result={"status": "passed"}, ok=True),
            ],
        )
        store.update(done, reward=1.0)
        store.close_trajectory(done, "success")
        failed = store.create(task="port to v2").trajectory_id
        store.close_trajectory(failed, "failure")
        live = store.create(task="still going").trajectory_id
    return {"done": done, "failed": failed, "live": live}


def test_list_shows_newest_first_with_status_outcome_and_step_count(filled: dict[str, str]) -> None:
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [line.split()[0] for line in lines] == [filled["live"], filled["failed"], filled["done"]]
    assert "closed success       2 steps  reward 1.00" in lines[2]
    closed = runner.invoke(app, ["list", "--status", "closed", "--json"])
    assert [json.loads(line)["trajectory_id"] for line in closed.output.splitlines()] == [
        filled["failed"],
        filled["done"],
    ]


def test_show_prints_the_steps(filled: dict[str, str]) -> None:
    result = runner.invoke(app, ["show", filled["done"]])
    assert result.exit_code == 0, result.output
    assert "task: fix the parser" in result.output
    assert "[1]" in result.output
    assert "tool_call run_tests ok" in result.output
    as_json = runner.invoke(app, ["show", filled["done"], "--json"])
    assert json.loads(as_json.output)["steps"][0]["content"] == "check parse()"


def test_show_of_an_unknown_id_fails_with_a_message(filled: dict[str, str]) -> None:
    result = runner.invoke(app, ["show", "traj-nope"])
    assert result.exit_code == 2
    assert "no trajectory 'traj-nope'" in result.output


def test_export_trl_writes_closed_trajectories_with_their_reward(filled: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "trl.jsonl"
    result = runner.invoke(app, ["export", "--format", "trl", "--out", str(out)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    # "failed" has no steps: nothing to train on, so it is skipped and counted on stderr.
    assert {r["trajectory_id"]: r["reward"] for r in records} == {filled["done"]: 1.0}
    assert all(r["prompt"][0]["role"] == "user" for r in records)
    assert "skipped 1 trajectories with nothing to train on" in result.stderr
    best = runner.invoke(app, ["export", "--format", "jsonl", "--min-reward", "0.5", "--include-open"])
    assert [json.loads(line)["trajectory_id"] for line in best.output.splitlines()] == [filled["done"]]


def test_an_unknown_export_format_is_refused_before_anything_is_written(filled: dict[str, str], tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "--format", "csv", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "csv" in result.output
    assert not (tmp_path / "x").exists()


def test_close_stale_closes_idle_open_trajectories(filled: dict[str, str]) -> None:
    assert "closed 0 trajectories" in runner.invoke(app, ["close-stale"]).output
    result = runner.invoke(app, ["close-stale", "--idle-hours", "0"])
    assert f"closed 1 trajectories: {filled['live']}" in result.output


@pytest.mark.parametrize(
    "command",
    [["list"], ["list", "--json"], ["export"], ["export", "--format", "trl"], ["export", "--include-open"]],
)
def test_a_fresh_home_is_an_empty_store_not_an_error(skillbank_home: Path, command: list[str]) -> None:
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    assert result.output == ""
    assert list(skillbank_home.iterdir()) == []


def test_on_a_fresh_home_show_is_an_input_error_and_close_stale_closes_none(skillbank_home: Path) -> None:
    shown = runner.invoke(app, ["show", "traj-1"])
    assert shown.exit_code == 2
    assert "no trajectory 'traj-1': none recorded under" in shown.stderr
    assert "closed 0 trajectories" in runner.invoke(app, ["close-stale"]).output
    assert list(skillbank_home.iterdir()) == []


def test_distill_on_a_fresh_home_has_nothing_to_do_and_creates_nothing(
    skillbank_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    cli = typer.Typer()
    cli.command()(distill)
    result = runner.invoke(cli, [])
    assert result.exit_code == 0, result.output
    assert "nothing to distill: no trajectories under" in result.output
    assert list(skillbank_home.iterdir()) == []
    refused = runner.invoke(cli, ["--llm-merge"])
    assert refused.exit_code == 2
    assert "--llm-merge needs a model" in refused.stderr


@pytest.mark.parametrize("command", [["trajectories", "export"], ["trajectories", "list"], ["skills", "export"]])
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(
    filled: dict[str, str], skillbank_home: Path, command: list[str]
) -> None:
    from mcp_server.services import open_bank
    from mcp_server.settings import Settings

    env = {**os.environ, "SKILLBANK_EMBEDDER": "hash", "SKILLBANK_STARTER_SKILLS": "true"}
    if command[0] == "skills":
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SKILLBANK_EMBEDDER", "hash")
            open_bank(Settings()).close()  # seeds the starter pack: plenty to export
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_server", *command], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    proc.stdout.close()  # what `| head -c 0` does: the first write finds no reader
    _, err = proc.communicate(timeout=120)
    assert err.decode() == ""
    assert proc.returncode == 1


def test_skills_export_to_a_reader_that_stops_after_a_few_bytes_exits_1(skillbank_home: Path) -> None:
    """`skills export | head -c 100`: one big write that the pipe took part of ended with exit 0."""
    from mcp_server.services import open_bank
    from mcp_server.settings import Settings
    from skills_store.models import Skill

    env = {**os.environ, "SKILLBANK_EMBEDDER": "hash", "SKILLBANK_STARTER_SKILLS": "false"}
    many = [
        Skill(skill_id=f"sk-{i}", title=f"T {i}", pattern=f"ValueError: {i}", strategy="Do it. " * 100)
        for i in range(400)
    ]  # ~300 KB of JSONL: more than a pipe holds
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SKILLBANK_EMBEDDER", "hash")
        patch.setenv("SKILLBANK_STARTER_SKILLS", "false")
        bank = open_bank(Settings())
        bank.upsert(many)
        bank.close()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_server", "skills", "export"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert len(proc.stdout.read(100)) == 100
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert err.decode() == ""
    assert proc.returncode == 1


@pytest.mark.parametrize("how", ["the file", "its wal", "a new file in the data dir", "a symlink", "a hard link"])
def test_export_onto_a_file_of_the_data_dir_is_refused_and_the_store_is_untouched(
    filled: dict[str, str], skillbank_home: Path, tmp_path: Path, how: str
) -> None:
    db = skillbank_home / "trajectories.db"
    out = {"the file": db, "its wal": Path(f"{db}-wal"), "a new file in the data dir": skillbank_home / "x.jsonl",
           "a symlink": tmp_path / "link.jsonl", "a hard link": tmp_path / "hard.jsonl"}[how]  # fmt: skip
    if how == "a symlink":
        out.symlink_to(db)
    if how == "a hard link":
        out.hardlink_to(db)
    before = db.read_bytes()
    result = runner.invoke(app, ["export", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "of the data dir" in result.output or "inside the data dir" in result.output
    assert db.read_bytes() == before
    assert len(runner.invoke(app, ["list", "--json"]).output.splitlines()) == 3


@pytest.mark.parametrize("hours", ["1e12", "inf", "nan", "-1"])
def test_close_stale_refuses_an_idle_time_it_cannot_count_and_closes_nothing(
    filled: dict[str, str], skillbank_home: Path, hours: str
) -> None:
    result = runner.invoke(app, ["close-stale", "--idle-hours", hours])
    assert result.exit_code == 2, result.output
    assert "--idle-hours" in result.output
    with SQLiteTrajectoryStore(skillbank_home / "trajectories.db") as store:
        assert store.get(filled["live"], with_steps=False).status == "open"


def test_an_export_to_a_file_on_a_fresh_home_leaves_an_earlier_export_there(
    skillbank_home: Path, tmp_path: Path
) -> None:
    """An unset or mistyped SKILLBANK_HOME truncated the earlier export at --out to 0 bytes ("wrote 0 trajectories")."""
    out = tmp_path / "training.jsonl"
    out.write_text('{"trajectory_id": "traj-1"}\n')
    result = runner.invoke(app, ["export", "--format", "trl", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert f"no trajectories recorded under {skillbank_home} yet; {out} left as it was" in result.stderr
    assert out.read_text() == '{"trajectory_id": "traj-1"}\n'
    assert list(skillbank_home.iterdir()) == []


def test_an_export_while_a_server_closes_sessions_holds_each_trajectory_once(
    skillbank_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages were read by offset, newest first: a session closed while the export ran pushed the others one place
    down, and the last trajectory of a page came again at the top of the next one (twice in the training data)."""
    import mcp_server.cli.trajectories as cli

    monkeypatch.setattr(cli, "PAGE", 2)
    with SQLiteTrajectoryStore(skillbank_home / "trajectories.db") as store:
        for n in range(5):
            tid = store.create(task=f"task {n}").trajectory_id
            store.close_trajectory(tid, "success")
        exported = []
        for traj in cli._all(store, include_open=False):
            exported.append(traj.trajectory_id)
            if len(exported) > 3:
                continue
            late = store.create(task="closed during the export").trajectory_id  # the server, meanwhile
            store.close_trajectory(late, "success")
    assert len(exported) == len(set(exported)), exported
    assert len(exported) >= 5
    assert len(exported) < 20  # it ends
