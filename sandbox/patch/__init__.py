"""The patch engine behind the `apply_patch` tool: unified diffs and the Codex envelope, applied all or nothing.

`apply_patch(root, patch, dry_run=False) -> PatchResult`; a refused patch raises `sandbox.errors.PatchError`
whose message tells the model what to fix. No MCP imports here: `mcp_server/` adapts it.
"""

from sandbox.patch.apply import apply_patch
from sandbox.patch.models import MAX_PATCH_BYTES, FileChange, MatchLevel, PatchResult, SyntaxIssue

__all__ = ["MAX_PATCH_BYTES", "FileChange", "MatchLevel", "PatchResult", "SyntaxIssue", "apply_patch"]
