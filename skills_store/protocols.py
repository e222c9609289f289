"""The boundaries of the storage layer, one small Protocol each. One file per implementation.

All methods are blocking; async callers run them through `anyio.to_thread.run_sync`.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from skills_store.models import Outcome, Skill, Step, Trajectory, TrajectoryStatus

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), float32, each row of unit length."""
        ...


@runtime_checkable
class SkillStore(Protocol):
    """The system of record for skills and their vectors (Chroma)."""

    location: str
    """Where it is (a directory or a server's URL), for messages."""

    def upsert(self, skills: Sequence[Skill], embeddings: np.ndarray) -> None: ...

    def delete(self, skill_ids: Sequence[str]) -> None: ...

    def get(self, skill_ids: Sequence[str]) -> list[Skill]:
        """The skills that exist among `skill_ids`, in the given order."""
        ...

    def iter_all(self, batch_size: int = 1000) -> list[tuple[Skill, np.ndarray]]:
        """Every skill with its stored vector (used to rebuild derived indexes)."""
        ...

    def query(self, embedding: np.ndarray, n: int, where: dict | None = None) -> list[tuple[str, float]]:
        """The `n` nearest skill ids with their cosine similarity, best first."""
        ...

    def count(self) -> int: ...

    def ids(self) -> list[str]:
        """Every stored skill id."""
        ...

    def revisions(self) -> dict[str, str]:
        """Other writers' change markers on a shared store (`{}` when nobody else writes to it)."""
        ...

    def marked(self) -> bool:
        """Whether any writer (this one included) has left its change marker on a shared store; False for an
        embedded one, which keeps none."""
        ...

    def written_since(self, written_ns: int) -> list[tuple[Skill, np.ndarray]]:
        """The skills (with vectors) written at or after `written_ns` (wall clock, ns)."""
        ...

    def update_metadata(self, skills: Sequence[Skill]) -> None:
        """Rewrite the stored records (counters, confidence) of existing skills without touching their vectors."""
        ...

    def reopen(self) -> None:
        """Drop any cached view of the store so that writes of other processes become visible."""
        ...

    def recreate(self) -> None:
        """Empty the store (to change the embedding dimension)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class TrajectoryStore(Protocol):
    """Durable storage of trajectories and their steps. A step acknowledged by `append` survives a crash."""

    def create(
        self,
        *,
        trajectory_id: str | None = None,
        task: str | None = None,
        source: str | None = None,
        workspace: str | None = None,
        repo: str | None = None,
    ) -> Trajectory: ...

    def append(
        self, trajectory_id: str, steps: Sequence[Step], *, shown_skills: Sequence[str] = (), durable: bool = True
    ) -> int:
        """Append steps (already redacted) and return the trajectory's total step count; `shown_skills` are linked
        (`link_skills`) in the same transaction. `durable=False`: committed, on disk with the next durable commit.

        Raises `NotFound` for an unknown id and `InvalidInput` when the trajectory is closed.
        """
        ...

    def try_append(
        self, trajectory_id: str, steps: Sequence[Step], *, shown_skills: Sequence[str] = (), durable: bool = True
    ) -> int | None:
        """`append` only if it commits at once (no other write running or waiting); None, nothing written, if not."""
        ...

    def check_steps(self, steps: Sequence[Step]) -> None:
        """Raise `InvalidInput`, in `append`'s words, when `append` would refuse one of `steps` (its kind, its size),
        without writing anything: a caller can refuse a call before it creates the trajectory for it."""
        ...

    def update(
        self,
        trajectory_id: str,
        *,
        task: str | None = None,
        outcome: Outcome | None = None,
        reward: float | None = None,
    ) -> Trajectory: ...

    def close_trajectory(self, trajectory_id: str, outcome: Outcome | None = None) -> Trajectory: ...

    def link_skills(self, trajectory_id: str, skill_ids: Sequence[str]) -> None:
        """Remember that these skills were shown in the trajectory (for confidence updates on close)."""
        ...

    def get(self, trajectory_id: str, *, with_steps: bool = True) -> Trajectory: ...

    def list(
        self,
        *,
        status: TrajectoryStatus | None = None,
        since: datetime | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[Trajectory]:
        """Trajectories without their steps, newest first."""
        ...

    def ensure(
        self,
        trajectory_id: str,
        *,
        task: str | None = None,
        source: str | None = None,
        workspace: str | None = None,
        repo: str | None = None,
    ) -> Trajectory:
        """The trajectory with this id, created open if missing (race-free across processes)."""
        ...

    def step_count(self, trajectory_id: str) -> int: ...

    def shown_skills(self, trajectory_id: str) -> builtins.list[str]:
        """The skill ids linked to the trajectory, in the order they were first shown."""
        ...

    def pending_for(self, distiller: str, limit: int = 100) -> builtins.list[Trajectory]:
        """Closed trajectories, with their steps, not yet marked processed by `distiller`; oldest closed first."""
        ...

    def mark_processed(self, trajectory_ids: Sequence[str], distiller: str) -> None:
        """Take these trajectories out of `pending_for(distiller)`; an unknown id raises `NotFound`, marks nothing."""
        ...

    def close_stale(self, idle_for: timedelta, outcome: Outcome = "abandoned") -> builtins.list[str]:
        """Close every open trajectory with no write for `idle_for` (left by a crashed client); return the ids."""
        ...

    def close(self) -> None:
        """Release the store's connections (every resource of this package has this one verb)."""
        ...


@runtime_checkable
class Distiller(Protocol):
    """Turns closed trajectories into skill drafts (new `Skill` objects, not yet merged or stored)."""

    name: str

    def distill(self, trajectories: Sequence[Trajectory]) -> list[Skill]: ...
