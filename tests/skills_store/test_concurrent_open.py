"""Several processes (best-of-N servers, a CLI beside a server) opening one fresh data dir at the same moment."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from skills_store.catalog import Catalog
from skills_store.datadir import preflight
from skills_store.errors import ConfigError
from skills_store.trajectories.store import SQLiteTrajectoryStore

# A child that opens every store of the data dir named on each stdin line, the way `skillbank serve` does
# (preflight, trajectories.db, then the bank: catalog.db and the Chroma dir), and answers "ok" or the error.
CHILD = """
import sys
from pathlib import Path
from skills_store.bank import SkillBank
from skills_store.datadir import preflight
from skills_store.errors import ConfigError
from skills_store.embedders import make_embedder
from skills_store.trajectories.store import SQLiteTrajectoryStore
print("ready", flush=True)
for line in sys.stdin:
    home = Path(line.strip())
    try:
        preflight(home)
        with SQLiteTrajectoryStore(home / "trajectories.db"), SkillBank.open(home, make_embedder("hash")) as bank:
            bank.count()
        print("ok", flush=True)
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}".replace("\\n", " "), flush=True)
"""


@pytest.mark.e2e
@pytest.mark.slow
def test_processes_opening_one_fresh_data_dir_at_once_all_succeed(tmp_path: Path) -> None:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=Path.cwd()
        )
        for _ in range(3)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
        answers: list[str] = []
        for round_ in range(6):
            home = tmp_path / f"fresh-{round_}"  # not created: the children race to create it too
            for child in children:  # every child is blocked on its stdin: this line is the start signal
                assert child.stdin is not None
                child.stdin.write(f"{home}\n")
                child.stdin.flush()
            answers += [child.stdout.readline().strip() for child in children if child.stdout is not None]
        assert answers == ["ok"] * 18
    finally:
        for child in children:
            with child:  # closes its pipes and waits for it (its stdin at EOF ends its loop)
                if child.stdin is not None:
                    child.stdin.close()


def test_threads_with_their_own_connections_create_one_fresh_data_dir_at_once(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    for round_ in range(5):
        home = tmp_path / f"fresh-{round_}"
        start = threading.Barrier(4)

        def open_all(home: Path = home, start: threading.Barrier = start) -> None:
            try:
                start.wait(timeout=10)
                preflight(home)
                with SQLiteTrajectoryStore(home / "trajectories.db"), Catalog(home / "catalog.db") as catalog:
                    assert catalog.count() == 0
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=open_all) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    assert errors == []


def test_an_empty_store_file_just_created_by_another_process_passes_the_preflight(tmp_path: Path) -> None:
    (tmp_path / "trajectories.db").write_bytes(b"")
    (tmp_path / "catalog.db").write_bytes(b"")
    preflight(tmp_path)
    with SQLiteTrajectoryStore(tmp_path / "trajectories.db") as store:
        assert store.path.stat().st_size > 0


def test_a_store_file_with_a_foreign_header_is_still_refused_as_corrupt(tmp_path: Path) -> None:
    (tmp_path / "trajectories.db").write_bytes(b"not a database at all, 32 bytes")
    with pytest.raises(ConfigError, match=r"trajectories\.db is not a SQLite database"):
        preflight(tmp_path)
