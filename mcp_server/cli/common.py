"""Helpers shared by the CLI commands: settings loaded once, and errors printed without a traceback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn

import typer
from pydantic import ValidationError

from mcp_server.settings import Settings
from sandbox.errors import SandboxError
from skills_store.errors import SkillStoreError

if TYPE_CHECKING:
    from skills_store.bank import SkillBank


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"skillbank: error: {message}", err=True)
    raise typer.Exit(code)


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"SKILLBANK_{'_'.join(str(p) for p in e['loc']).upper()}: {e['msg']}" for e in exc.errors()
        )
        fail(f"invalid settings: {problems}")


@contextmanager
def clean_errors() -> Iterator[None]:
    """Our expected errors (bad input, bad configuration) end the command with a message, not a traceback."""
    try:
        yield
    except (SkillStoreError, SandboxError) as exc:
        fail(str(exc))
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        fail(f"{where}{exc.strerror or exc}")
    except KeyboardInterrupt:
        sys.exit(130)


def open_bank_cli(settings: Settings) -> SkillBank:
    """`services.open_bank`, imported only when a command needs the bank (torch and Chroma load with it)."""
    from mcp_server.services import open_bank

    return open_bank(settings)
