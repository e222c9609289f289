"""Building the server's dependencies from settings. Cheap checks run now; heavy opening is deferred.

`build_deps` validates the data dir and opens the trajectory store (SQLite, fast) so that a broken setup fails at
start-up with a message naming the path. The skill bank (Chroma + the embedding model) is opened later, in a
thread, by `LazySkillBank`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_server.capture import SessionCapture
from mcp_server.deps import ALL_TOOLS, Deps, unknown_tools
from mcp_server.lazy import LazySkillBank
from mcp_server.memory import trim
from mcp_server.outcome_hooks import on_close_callbacks
from mcp_server.settings import Settings
from skills_store.datadir import preflight
from skills_store.errors import ConfigError
from skills_store.redact import Redactor
from skills_store.repo_identity import repo_identity
from skills_store.trajectories.store import SQLiteTrajectoryStore

if TYPE_CHECKING:
    from skills_store.bank import SkillBank


def open_bank(settings: Settings, *, reembed: bool = False, isolated: bool = False) -> SkillBank:
    """Open the skill bank (imports chromadb and the model) and load the starter pack into a new store.

    `isolated=True` (the server) runs the embedding model in a worker process: torch never loads into the process
    that answers requests, so the load takes no interpreter time from them and never delays the server's exit.
    The CLI loads it in-process (simpler, and nothing waits on it).
    """
    from skills_store.bank import SkillBank
    from skills_store.embedders import make_embedder
    from skills_store.starter import decline_if_new, seed_if_new

    bank = SkillBank.open(
        settings.home,
        make_embedder(settings.embedder, isolated=isolated),
        chroma_url=settings.chroma_url,
        reembed=reembed,
        redactor=Redactor(settings.redact_patterns),
    )
    if settings.starter_skills:
        seed_if_new(bank)
    else:
        decline_if_new(bank)
    trim()
    return bank


def resolve_workspace(settings: Settings, override: Path | None = None) -> Path:
    workspace = (override or settings.workspace or Path.cwd()).expanduser()
    try:
        resolved = workspace.resolve(strict=True)
    except OSError as exc:
        raise ConfigError(f"the workspace {workspace} does not exist; pass --workspace DIR") from exc
    if not resolved.is_dir():
        raise ConfigError(f"the workspace {workspace} is not a directory; pass --workspace DIR")
    return resolved


def build_deps(settings: Settings, *, workspace: Path | None = None, tools: Iterable[str] | None = None) -> Deps:
    preflight(settings.home)
    root = resolve_workspace(settings, workspace)
    selected = tuple(tools) if tools is not None else ALL_TOOLS
    if settings.no_skills:
        selected = tuple(t for t in selected if t != "search_skills")
    problem = unknown_tools(selected)
    if problem:
        raise ConfigError(problem)
    trajectories = SQLiteTrajectoryStore(settings.home / "trajectories.db")
    skills = LazySkillBank(lambda: open_bank(settings, isolated=True))
    capture = SessionCapture(
        trajectories,
        Redactor(settings.redact_patterns),
        workspace=str(root),
        repo=repo_identity(root),
        on_close=on_close_callbacks(skills, trajectories, settings),
    )
    return Deps(
        settings=settings,
        workspace=root,
        skills=skills,
        trajectories=trajectories,
        capture=capture,
        tools=tuple(t for t in ALL_TOOLS if t in selected),
    )
