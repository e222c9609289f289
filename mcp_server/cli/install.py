"""`skillbank install|uninstall claude|codex|cline`: connect a client to skillbank in one step, or undo it.

A thin adapter over `agent.install`: options and the environment are resolved here (the `skillbank` executable
the client will start, HOME, config locations), and each change is printed as one line.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer
from pydantic import ValidationError
from pydantic_settings import SettingsError

from mcp_server.cli.common import clean_errors, fail, settings_problem
from mcp_server.settings import Settings

ClientName = Literal["claude", "codex", "cline"]
ScopeName = Literal["project", "user"]
DEFAULT_SCOPE: dict[str, ScopeName] = {"claude": "project", "codex": "user", "cline": "user"}


def _skillbank_command() -> str:
    beside = Path(sys.executable).with_name("skillbank")
    found = str(beside) if beside.exists() else shutil.which("skillbank")
    if found is None:
        fail("cannot find the skillbank executable to register; install skillbank (make install) first")
    return str(Path(found).absolute())


def _client_env(strict: bool) -> dict[str, str]:
    """The environment the client's config is written from (config locations, and the SKILLBANK_* settings that
    are pinned there), with the settings that are paths (`SKILLBANK_HOME`, a `SKILLBANK_TEST_PYTHON` path) as
    `Settings` reads them: absolute against this cwd, since the client starts the server and the hook elsewhere.

    `strict` (install): a bad setting is refused (exit 2) before any file is touched, as it would be pinned into
    the config and stop every start of the server. Uninstall takes the environment as it is.
    """
    env = dict(os.environ)
    try:
        settings = Settings()
    except (ValidationError, SettingsError) as exc:
        if strict:
            fail(f"{settings_problem(exc)} (it would be pinned in the client's config; fix it, then run again)")
        return env
    for field in ("home", "test_python"):
        variable = f"SKILLBANK_{field.upper()}"
        if env.get(variable):
            value = getattr(settings, field)
            env[variable] = str(value.absolute()) if isinstance(value, Path) else str(value)
    return env


def _target(
    client: ClientName, scope: ScopeName | None, workspace: Path | None, hooks: bool, force: bool, *, strict: bool
):
    from agent.install import Target

    if hooks and client != "claude":
        fail("--hooks is for Claude Code only (Codex and Cline have no hook to capture their own edits with)")
    chosen: ScopeName = scope or DEFAULT_SCOPE[client]
    root = Path(os.path.normpath((workspace or Path.cwd()).absolute()))  # `../proj` and `proj/.` name one place
    if workspace is not None and not root.is_dir():
        fail(f"--workspace {workspace} is not a directory")
    pin = client == "cline" or (chosen == "user" and workspace is not None)
    return Target(client=client, scope=chosen, workspace=root, pin_workspace=pin, home=Path.home(),
                  command=_skillbank_command(), env=_client_env(strict), force=force, hooks=hooks)  # fmt: skip


Scope = Annotated[
    Literal["project", "user"] | None,
    typer.Option(help="project (Claude Code's .mcp.json) or user config; default: project for claude, else user."),
]
Workspace = Annotated[
    Path | None,
    typer.Option(
        help="The project (default: cwd). Cline's server is pinned to it; at user scope a server is pinned only when "
        "it is given (else it serves the directory the client runs in)."
    ),
]
Force = Annotated[bool, typer.Option(help="Replace or remove a different server named skillbank.")]


def install(
    client: Annotated[ClientName, typer.Argument(help="claude, codex or cline.")],
    scope: Scope = None,
    workspace: Workspace = None,
    hooks: Annotated[bool, typer.Option(help="Claude Code: also merge the trajectory-capture hooks.")] = False,
    force: Force = False,
) -> None:
    """Register skillbank as an MCP server of Claude Code, Codex or Cline (idempotent, with backups)."""
    from agent.install import install as run

    with clean_errors():
        for change in run(_target(client, scope, workspace, hooks, force, strict=True)):
            typer.echo(change.line())


def uninstall(
    client: Annotated[ClientName, typer.Argument(help="claude, codex or cline.")],
    scope: Scope = None,
    workspace: Workspace = None,
    hooks: Annotated[bool, typer.Option(help="Accepted for symmetry; installed hooks are always removed.")] = False,
    force: Force = False,
) -> None:
    """Remove exactly what `skillbank install` added."""
    from agent.install import uninstall as run

    with clean_errors():
        changes = run(_target(client, scope, workspace, hooks and client == "claude", force, strict=False))
        for change in changes:
            typer.echo(change.line())
        if not changes:
            typer.echo("nothing to remove")
