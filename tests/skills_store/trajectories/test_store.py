"""SQLiteTrajectoryStore: the TrajectoryStore contract on a real SQLite file."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from skills_store.errors import ConfigError, InvalidInput, NotFound
from skills_store.models import Step
from skills_store.protocols import TrajectoryStore
from skills_store.trajectories.store import SQLiteTrajectoryStore, SQLiteTrajectoryStoreConfig
from skills_store.truncate import truncate_text


@pytest.fixture
def store(tmp_path: Path):
    with SQLiteTrajectoryStore(tmp_path / "trajectories.db") as s:
        yield s


def _one_session(store: TrajectoryStore) -> str:
    """A whole session through the protocol alone, as the MCP adapter and the distiller use it."""
    tid = store.create(task="fix the parser", source="mcp:test").trajectory_id
    store.append(tid, [Step(kind="thought", content="read the traceback")])
    store.link_skills(tid, ["sk-2", "sk-1", "sk-2"])
    store.update(tid, reward=1.0)
    store.close_trajectory(tid, "success")
    return tid


def test_a_session_goes_through_the_protocol_from_create_to_processed(store: SQLiteTrajectoryStore) -> None:
    tid = _one_session(store)
    traj = store.get(tid)
    assert (traj.status, traj.outcome, traj.reward, traj.skills_shown) == ("closed", "success", 1.0, ["sk-2", "sk-1"])
    assert [t.trajectory_id for t in store.pending_for("heuristic")] == [tid]
    store.mark_processed([tid], "heuristic")
    assert store.pending_for("heuristic") == []
    assert [t.trajectory_id for t in store.pending_for("outcomes")] == [tid]  # each distiller keeps its own marks


def test_appended_steps_come_back_in_order_with_indices_and_timestamps(store: SQLiteTrajectoryStore) -> None:
    traj = store.create(task="fix the parser", source="mcp:test", workspace="/w", repo="demo")
    assert store.append(traj.trajectory_id, [Step(kind="thought", content="look at the traceback")]) == 1
    total = store.append(
        traj.trajectory_id,
        [
            Step(kind="tool_call", tool="run_tests", args={"tests": ["t.py"]}, result={"status": "failed"}, ok=False),
            Step(kind="observation", content="1 failed", tokens_in=10, cost_usd=0.01),
        ],
    )
    assert total == 3
    got = store.get(traj.trajectory_id)
    assert [s.index for s in got.steps] == [0, 1, 2]
    assert [s.kind for s in got.steps] == ["thought", "tool_call", "observation"]
    assert got.steps[1].args == {"tests": ["t.py"]}
    assert got.steps[1].ok is False
    assert got.steps[2].tokens_in == 10
    assert all(s.ts.tzinfo is not None for s in got.steps)
    assert (got.task, got.source, got.workspace, got.repo, got.status) == (
        "fix the parser",
        "mcp:test",
        "/w",
        "demo",
        "open",
    )


def test_a_given_step_timestamp_is_kept(store: SQLiteTrajectoryStore) -> None:
    traj = store.create()
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    store.append(traj.trajectory_id, [Step(kind="message", content="hi", ts=when)])
    assert store.get(traj.trajectory_id).steps[0].ts == when


def test_appending_to_an_unknown_trajectory_is_not_found(store: SQLiteTrajectoryStore) -> None:
    with pytest.raises(NotFound, match="no trajectory 'traj-missing'"):
        store.append("traj-missing", [Step(kind="thought", content="x")])


def test_writing_to_a_closed_trajectory_is_refused_and_changes_nothing(store: SQLiteTrajectoryStore) -> None:
    traj = store.create()
    store.append(traj.trajectory_id, [Step(kind="thought", content="x")])
    closed = store.close_trajectory(traj.trajectory_id, "success")
    assert (closed.status, closed.outcome) == ("closed", "success")
    assert closed.closed_at is not None
    with pytest.raises(InvalidInput, match="is closed"):
        store.append(traj.trajectory_id, [Step(kind="thought", content="y")])
    with pytest.raises(InvalidInput, match="is closed"):
        store.update(traj.trajectory_id, task="other")
    with pytest.raises(InvalidInput, match="is closed"):
        store.close_trajectory(traj.trajectory_id)
    assert store.step_count(traj.trajectory_id) == 1
    assert store.get(traj.trajectory_id).task is None


def test_an_oversized_step_is_refused_and_no_step_of_the_call_is_stored(tmp_path: Path) -> None:
    config = SQLiteTrajectoryStoreConfig(max_step_bytes=5_000)
    with SQLiteTrajectoryStore(tmp_path / "t.db", config) as store:
        traj = store.create()
        with pytest.raises(InvalidInput, match=r"step 1 \(observation\) is .* over the 5,000-byte limit"):
            store.append(
                traj.trajectory_id, [Step(kind="thought", content="ok"), Step(kind="observation", content="x" * 6000)]
            )
        assert store.step_count(traj.trajectory_id) == 0


def test_an_unknown_step_kind_is_refused(store: SQLiteTrajectoryStore) -> None:
    traj = store.create()
    bogus = Step.model_construct(kind="dream", content="x")
    with pytest.raises(InvalidInput, match="unknown kind 'dream'"):
        store.append(traj.trajectory_id, [bogus])


def test_long_texts_keep_their_head_and_tail_around_a_marker(tmp_path: Path) -> None:
    config = SQLiteTrajectoryStoreConfig(max_text_chars=1_000)
    with SQLiteTrajectoryStore(tmp_path / "t.db", config) as store:
        traj = store.create()
        text = "HEAD" + "m" * 50_000 + "TAIL"
        store.append(traj.trajectory_id, [Step(kind="tool_call", content=text, result={"stdout": text})])
        step = store.get(traj.trajectory_id).steps[0]
    for stored in (step.content, step.result["stdout"]):
        assert stored.startswith("HEAD")
        assert stored.endswith("TAIL")
        assert "characters truncated" in stored
        assert len(stored) <= 1_000


def test_truncate_text_leaves_short_texts_alone() -> None:
    assert truncate_text("short", 300) == "short"
    cut = truncate_text("a" * 400 + "b" * 400, 300)
    assert "[... " in cut
    assert len(cut) <= 300
    assert cut.endswith("b")


def test_update_sets_task_outcome_and_reward_without_erasing_them(store: SQLiteTrajectoryStore) -> None:
    traj = store.create(task="first")
    store.update(traj.trajectory_id, reward=0.75)
    got = store.update(traj.trajectory_id, outcome="failure")
    assert (got.task, got.outcome, got.reward) == ("first", "failure", 0.75)
    with pytest.raises(InvalidInput, match="unknown outcome 'meh'"):
        store.update(traj.trajectory_id, outcome="meh")  # type: ignore[arg-type]


def test_creating_a_duplicate_id_is_refused_but_ensure_returns_the_existing_one(store: SQLiteTrajectoryStore) -> None:
    store.create(trajectory_id="claude-abc", task="t")
    with pytest.raises(InvalidInput, match="already exists"):
        store.create(trajectory_id="claude-abc")
    assert store.ensure("claude-abc", task="other").task == "t"
    assert store.ensure("claude-new", source="claude-code").source == "claude-code"


def test_shown_skills_are_linked_once_in_first_shown_order(store: SQLiteTrajectoryStore) -> None:
    traj = store.create()
    store.link_skills(traj.trajectory_id, ["sk-2", "sk-1"])
    store.link_skills(traj.trajectory_id, ["sk-1", "sk-3", "sk-3"])
    assert store.shown_skills(traj.trajectory_id) == ["sk-2", "sk-1", "sk-3"]
    assert store.get(traj.trajectory_id, with_steps=False).skills_shown == ["sk-2", "sk-1", "sk-3"]
    with pytest.raises(NotFound):
        store.link_skills("traj-missing", ["sk-1"])
    with pytest.raises(NotFound):
        store.shown_skills("traj-missing")


def test_list_is_newest_first_and_filters_by_status_and_time(store: SQLiteTrajectoryStore) -> None:
    ids = [store.create(task=f"t{i}").trajectory_id for i in range(3)]
    store.close_trajectory(ids[0], "success")
    assert [t.trajectory_id for t in store.list()] == ids[::-1]
    assert [t.trajectory_id for t in store.list(status="closed")] == [ids[0]]
    assert [t.trajectory_id for t in store.list(limit=1, offset=1)] == [ids[1]]
    assert store.list(since=datetime.now(UTC) + timedelta(hours=1)) == []
    assert all(t.steps == [] for t in store.list())
    with pytest.raises(InvalidInput):
        store.list(limit=0)


def test_pending_for_lists_closed_unprocessed_trajectories_per_distiller(store: SQLiteTrajectoryStore) -> None:
    a, b, c = (store.create().trajectory_id for _ in range(3))
    store.append(a, [Step(kind="thought", content="x")])
    store.close_trajectory(a, "success")
    store.close_trajectory(b, "failure")
    pending = store.pending_for("heuristic")
    assert [t.trajectory_id for t in pending] == [a, b]
    assert pending[0].steps[0].content == "x"
    store.mark_processed([a], "heuristic")
    assert [t.trajectory_id for t in store.pending_for("heuristic")] == [b]
    assert [t.trajectory_id for t in store.pending_for("llm")] == [a, b]
    assert c not in [t.trajectory_id for t in store.pending_for("llm")]


def test_marking_an_unknown_trajectory_processed_marks_nothing(store: SQLiteTrajectoryStore) -> None:
    a = store.create().trajectory_id
    store.close_trajectory(a)
    with pytest.raises(NotFound, match="traj-missing"):
        store.mark_processed([a, "traj-missing"], "heuristic")
    assert [t.trajectory_id for t in store.pending_for("heuristic")] == [a]


def test_close_stale_closes_only_idle_open_trajectories(store: SQLiteTrajectoryStore) -> None:
    idle = store.create().trajectory_id
    assert store.close_stale(timedelta(hours=1)) == []
    assert store.close_stale(timedelta(seconds=-1)) == [idle]
    got = store.get(idle)
    assert (got.status, got.outcome) == ("closed", "abandoned")


def test_concurrent_threads_lose_no_step_and_indices_stay_contiguous(store: SQLiteTrajectoryStore) -> None:
    trajs = [store.create().trajectory_id for _ in range(4)]
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(100):
                store.append(trajs[n % 4], [Step(kind="action", content=f"{n}:{i}")])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    for tid in trajs:
        steps = store.get(tid).steps
        assert [s.index for s in steps] == list(range(200))
        assert len({s.content for s in steps}) == 200
    assert store.commits <= 4 + 800


def test_an_unusable_path_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(ConfigError, match="cannot open the trajectory store"):
        SQLiteTrajectoryStore(tmp_path / "taken")
