"""`skillbank hook claude`: the Claude Code hook (event JSON on stdin; see claude_settings.example.json).

Kept light: it imports no MCP SDK and no model, so each hook call costs a Python start and a few SQLite writes.

It never exits 2: for Claude Code a hook's exit status 2 is a *blocking* error (a prompt is refused and erased, a
tool result is fed back to the model as an error), which a capture hook must never cause. So it reads only the
settings it uses (`HOOK_FIELDS`), and a bad one of those ends it with exit 1 and the message on stderr, as any
other refusal does; Claude Code then goes on.
"""

from __future__ import annotations

import sys

import typer
from pydantic import ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsError

from mcp_server.cli.common import settings_problem
from mcp_server.settings import Settings

#: The settings the hook uses. `skillbank install claude --hooks` pins exactly these into the hook command.
HOOK_FIELDS = ("home", "redact_patterns", "suggest_threshold")

app = typer.Typer(
    help="Hooks that capture agent sessions as trajectories and bring skills to them.", no_args_is_help=True
)


class _HookEnv(EnvSettingsSource):
    """The environment, as far as the hook's own settings go: a variable it does not use is not even parsed."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        super().__init__(settings_cls)
        names = {f"skillbank_{field}" for field in HOOK_FIELDS}
        self.env_vars = {k: v for k, v in self.env_vars.items() if k.lower() in names}


class HookSettings(Settings):
    """`Settings` read from `HOOK_FIELDS`' variables only (the rest keep their defaults, unused by the hook)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, _HookEnv(settings_cls))


@app.callback()
def hooks() -> None:
    """Hooks that agents run on their own events."""


@app.command()
def claude() -> None:
    """Claude Code hook for SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure and SessionEnd."""
    raise typer.Exit(_run_claude())


def _run_claude() -> int:
    from mcp_server.claude_hook import run

    try:
        settings = HookSettings()
    except (ValidationError, SettingsError) as exc:
        sys.stderr.write(f"skillbank hook claude: {settings_problem(exc)}\n")
        return 1
    stdin = getattr(sys.stdin, "buffer", None)  # bytes: the hook decodes them itself, never failing on bad UTF-8
    return run(
        stdin.read() if stdin is not None else sys.stdin.read(),
        home=settings.home,
        redact_patterns=settings.redact_patterns,
        out=sys.stdout,
        err=sys.stderr,
        threshold=settings.suggest_threshold,
    )


def claude_main() -> None:
    """`skillbank hook claude` without building the whole CLI (the fast path `mcp_server.cli.main` takes)."""
    sys.exit(_run_claude())
