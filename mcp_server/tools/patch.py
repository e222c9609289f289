"""The `apply_patch` tool: a thin adapter over `sandbox.patch.apply_patch` (all or nothing, jailed, the data dir
refused), which shows file names that are not UTF-8 C-quoted, as git does (`"latin\\351.txt"`)."""

from __future__ import annotations

from typing import Annotated

import anyio
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from mcp_server.deps import Deps
from mcp_server.errors import tool_result
from mcp_server.toolset import ToolSet
from sandbox.patch import PatchResult, apply_patch
from sandbox.patch.paths import shown_name
from sandbox.syntax_worker import SyntaxWorker
from skills_store.trajectories.summaries import FileChange, PatchSummary


def register(server: ToolSet, deps: Deps) -> None:
    # Patches to one workspace apply one at a time: two concurrent plans could each see the other's files old.
    workspace_lock = anyio.Lock()
    # The syntax check runs in a worker process beside the engine (spawned by the first patch that
    # names a .py file; it leaves when the server does).
    syntax_worker = SyntaxWorker()

    # The data dir may lie inside the workspace: run_tests hides it from the tests, and apply_patch refuses it.
    hidden = [deps.settings.home]

    def apply(patch: str, dry_run: bool) -> PatchResult:
        result = apply_patch(deps.workspace, patch, dry_run=dry_run, syntax_worker=syntax_worker, hidden=hidden)
        return shown_names(result)

    @server.tool(
        name="apply_patch",
        description=(
            "Apply a patch to the workspace, all files or none. Accepts unified diffs (git diff, diff -u) and the "
            "Codex '*** Begin Patch' envelope. Hunks that moved or whose whitespace drifted still apply; an "
            "ambiguous or non-matching hunk is refused with the lines it expected and the closest lines found. "
            "Paths must stay inside the workspace. Use dry_run to check a patch without writing."
        ),
        annotations=ToolAnnotations(
            title="Apply patch", destructive_hint=True, idempotent_hint=False, open_world_hint=False
        ),
    )
    async def apply_patch_tool(
        patch: Annotated[str, Field(min_length=1, description="The patch text (unified diff or Codex envelope).")],
        ctx: Context,
        dry_run: Annotated[bool, Field(description="Plan and report without writing anything.")] = False,
    ) -> Annotated[CallToolResult, PatchResult]:
        async with deps.capture.tool_call(ctx, "apply_patch", {"patch": patch, "dry_run": dry_run}) as call:
            async with workspace_lock:
                result = await anyio.to_thread.run_sync(apply, patch, dry_run)
            call.summary = PatchSummary(
                applied=result.applied,
                files=[FileChange(action=f.action, path=f.path) for f in result.files],
                fuzzy=any(f.fuzzy for f in result.files),
                syntax_errors=len(result.syntax_errors),
            )
            call.ok = result.applied or result.dry_run
            return tool_result(result, result.render())


def shown_names(result: PatchResult) -> PatchResult:
    """`result` with every file name that is not UTF-8 C-quoted (`shown_name`): JSON cannot carry it as it is."""
    names = [name for f in result.files for name in (f.path, f.old_path) if name] + [
        i.path for i in result.syntax_errors
    ]
    if all(shown_name(name) is name for name in names):
        return result
    files = [
        f.model_copy(update={"path": shown_name(f.path), "old_path": f.old_path and shown_name(f.old_path)})
        for f in result.files
    ]
    issues = [i.model_copy(update={"path": shown_name(i.path)}) for i in result.syntax_errors]
    return result.model_copy(update={"files": files, "syntax_errors": issues})
