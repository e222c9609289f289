"""What to install where (`Target`), and the rules for our entry in a client's server map."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent.install.files import InstallError, dump_json, parse_json

Client = Literal["claude", "codex", "cline"]
Scope = Literal["project", "user"]
NAME = "skillbank"
#: Settings pinned in a client's config when they are set at install (the client may not pass the installer's
#: environment on, and a server without them would record into another data dir, unredacted, with another model):
#: every `mcp_server.settings.Settings` field (a test keeps the two in step), but never the HTTP token, and not the
#: workspace, which install pins as `--workspace` where it should.
PINNED_ENV = ("SKILLBANK_HOME", "SKILLBANK_CHROMA_URL", "SKILLBANK_STARTER_SKILLS", "SKILLBANK_EMBEDDER",
              "SKILLBANK_TEST_PYTHON", "SKILLBANK_SANDBOX", "SKILLBANK_DOCKER_IMAGE", "SKILLBANK_REWARD_WEIGHTS",
              "SKILLBANK_REDACT_PATTERNS", "SKILLBANK_NO_SKILLS", "SKILLBANK_SUGGEST_THRESHOLD", "SKILLBANK_REVIEW",
              "SKILLBANK_DISTILL_ON_CLOSE", "SKILLBANK_PRUNE_UNUSED_DAYS", "SKILLBANK_LOG_LEVEL")  # fmt: skip
#: The settings `skillbank hook claude` reads (`mcp_server.cli.hook.HOOK_FIELDS`), pinned in the hook's command.
HOOK_ENV = ("SKILLBANK_HOME", "SKILLBANK_REDACT_PATTERNS", "SKILLBANK_SUGGEST_THRESHOLD")
#: How long a client waits for one tool call. `run_tests` runs up to its `timeout_s` (600 s by default) and then
#: still stops the run and shapes the result; a client that gave up at 600 s would never see that `timeout` answer,
#: so clients wait 5 minutes longer (the bundled agent's read timeout is the same).
TOOL_TIMEOUT_S = 900


class Target(BaseModel):
    """Where and what to install: resolved by the CLI from its options and the environment."""

    client: Client
    scope: Scope
    workspace: Path
    """The project (absolute); project-scope files go here."""
    pin_workspace: bool
    """Pass `--workspace` to the server (else it serves the directory the client starts it in)."""
    home: Path
    command: str
    """The absolute path of the `skillbank` executable the client will start."""
    env: dict[str, str] = Field(default_factory=dict)
    """The installer's environment (config locations such as CODEX_HOME, XDG_CONFIG_HOME, and SKILLBANK_*, paths
    among them already absolute)."""
    force: bool = False
    hooks: bool = False

    def server_args(self) -> list[str]:
        return ["serve", "--workspace", str(self.workspace)] if self.pin_workspace else ["serve"]

    def server_env(self) -> dict[str, str]:
        return {k: self.env[k] for k in PINNED_ENV if self.env.get(k)}

    def hook_env(self) -> dict[str, str]:
        return {k: self.env[k] for k in HOOK_ENV if self.env.get(k)}


def same_server(existing: Any, wanted: Mapping[str, Any]) -> bool:
    """Whether `existing` is the entry we would write (keys we do not write, such as a client's own, are ignored)."""
    return isinstance(existing, Mapping) and all(existing.get(k) == v for k, v in wanted.items())


def is_skillbank(entry: Any) -> bool:
    """An entry that starts `skillbank serve` (written by an earlier install, perhaps from another venv)."""
    if not isinstance(entry, Mapping):
        return False
    args = entry.get("args") or []
    return Path(str(entry.get("command", ""))).name == NAME and list(args)[:1] == ["serve"]


def conflict(path: Path, verb: str) -> InstallError:
    return InstallError(
        f"{path} already has a different MCP server named {NAME!r}; {verb} would change it: look at it, then "
        "rerun with --force to replace it"
    )


def put_server(servers: dict[str, Any], wanted: dict[str, Any], path: Path, force: bool) -> str | None:
    """Add or replace our entry in a JSON `mcpServers` map; None when it is already there."""
    existing = servers.get(NAME)
    if existing is not None and same_server(existing, wanted):
        return None
    if existing is not None and not force:
        raise conflict(path, "install")
    servers[NAME] = {**(existing if isinstance(existing, dict) and force and is_skillbank(existing) else {}), **wanted}
    return "replaced the skillbank server" if existing is not None else "added the skillbank server"


def drop_server(servers: dict[str, Any], wanted: dict[str, Any], path: Path, force: bool) -> bool:
    existing = servers.get(NAME)
    if existing is None:
        return False
    if not (same_server(existing, wanted) or is_skillbank(existing) or force):
        raise InstallError(f"{path} has an MCP server named {NAME!r} that skillbank did not write; rerun with --force "
                           "to remove it anyway")  # fmt: skip
    del servers[NAME]
    return True


def drop_mcp_server(text: str, path: Path, wanted: dict[str, Any], force: bool) -> tuple[str, str] | None:
    """A JSON config (Claude Code's, Cline's) without skillbank's entry under `mcpServers`, the key too when nothing
    is left under it, in the file's own formatting; None when there is no entry to remove."""
    data = parse_json(text, path)
    servers = data.get("mcpServers")
    if not (isinstance(servers, dict) and drop_server(servers, wanted, path, force)):
        return None
    if not servers:
        del data["mcpServers"]
    return dump_json(data, like=text), "removed the skillbank server"
