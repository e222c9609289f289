"""What the tools need, built once per server by `mcp_server.services.build_deps` and passed to each tool module.

Nothing here imports torch, sentence-transformers, chromadb or docker: the skill bank behind `skills` is opened
in a background thread after the MCP handshake, and tools that need it wait for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_server.settings import Settings

if TYPE_CHECKING:
    from mcp_server.capture import SessionCapture
    from mcp_server.lazy import LazySkillBank
    from skills_store.protocols import TrajectoryStore

#: The tools of the contract, in the order they are listed.
ALL_TOOLS = ("search_skills", "apply_patch", "run_tests", "record_trajectory")
#: Tools that execute or write workspace code: off over HTTP unless `--allow-exec`.
EXEC_TOOLS = frozenset({"apply_patch", "run_tests"})


@dataclass
class Deps:
    settings: Settings
    workspace: Path
    """The resolved workspace root; every path a tool touches stays inside it."""
    skills: LazySkillBank
    trajectories: TrajectoryStore
    capture: SessionCapture
    tools: tuple[str, ...] = field(default=ALL_TOOLS)
    """The tools this server exposes (`--tools`, minus the exec tools over HTTP without `--allow-exec`)."""
