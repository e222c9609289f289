"""Durability and multi-process safety of SQLiteTrajectoryStore, with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skills_store.models import Step
from skills_store.trajectories.store import SQLiteTrajectoryStore

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from skills_store.models import Step
    from skills_store.trajectories.store import SQLiteTrajectoryStore

    db, tid, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = SQLiteTrajectoryStore(Path(db))
    store.ensure(tid)
    for i in range(count):
        total = store.append(tid, [Step(kind="action", content=f"{name}:{i}")])
        print(f"ack {name}:{i} {total}", flush=True)
    """
)


def _writer(tmp_path: Path, db: Path, tid: str, name: str, count: int) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    return subprocess.Popen(
        [sys.executable, str(script), str(db), tid, name, str(count)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )


@pytest.mark.e2e
def test_kill_9_during_ingest_keeps_every_acknowledged_step(tmp_path: Path) -> None:
    db = tmp_path / "trajectories.db"
    proc = _writer(tmp_path, db, "traj-kill", "w", 1_000_000)
    acked: list[str] = []
    assert proc.stdout is not None
    while len(acked) < 300:
        line = proc.stdout.readline()
        assert line, "the writer died before it was killed"
        acked.append(line.split()[1])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    with SQLiteTrajectoryStore(db) as store:
        stored = {s.content for s in store.get("traj-kill").steps}
        steps = store.get("traj-kill").steps
    assert set(acked) <= stored
    assert [s.index for s in steps] == list(range(len(steps)))


@pytest.mark.e2e
def test_two_processes_appending_to_one_trajectory_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "trajectories.db"
    with SQLiteTrajectoryStore(db) as store:
        store.create(trajectory_id="traj-shared")
    procs = [_writer(tmp_path, db, "traj-shared", name, 150) for name in ("a", "b")]
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        assert out.count("ack") == 150
    with SQLiteTrajectoryStore(db) as store:
        steps = store.get("traj-shared").steps
        store.append("traj-shared", [Step(kind="thought", content="after")])
    assert [s.index for s in steps] == list(range(300))
    assert {s.content for s in steps} == {f"{n}:{i}" for n in "ab" for i in range(150)}
