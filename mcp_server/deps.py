"""What the tools need, built once per server by `mcp_server.services.build_deps` and passed to each tool module.

Nothing here imports torch, sentence-transformers, chromadb or docker: the skill bank behind `skills` is opened
in a background thread after the MCP handshake, and tools that need it wait for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_server.settings import Settings

if TYPE_CHECKING:
    from mcp_server.capture import SessionCapture
    from mcp_server.lazy import LazySkillBank
    from skills_store.protocols import TrajectoryStore

#: The tools of the contract, in the order they are listed -> the module whose `register(toolset, deps)` adds it.
#: The one list of tools: the CLI, `build_deps` and `create_server` all read it. Only exposed modules are imported.
TOOL_MODULES = {
    "search_skills": "mcp_server.tools.search",
    "apply_patch": "mcp_server.tools.patch",
    "run_tests": "mcp_server.tools.run_tests",
    "record_trajectory": "mcp_server.tools.record_trajectory",
}
ALL_TOOLS = tuple(TOOL_MODULES)
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


def unknown_tools(names: Iterable[str]) -> str | None:
    """The complaint about names that are not tools of this server (with the closest one), or None if all are."""
    unknown = [n for n in names if n not in TOOL_MODULES]
    if not unknown:
        return None
    from mcp_server.tool_inputs import closest

    guesses = [g for g in (closest(n, ALL_TOOLS) for n in unknown) if g]
    hint = f" (did you mean {', '.join(guesses)}?)" if guesses else ""
    return f"unknown tool(s) {', '.join(unknown)}{hint}; choose from {', '.join(ALL_TOOLS)}"
