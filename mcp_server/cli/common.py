"""Helpers shared by the CLI commands: settings loaded once, errors printed without a traceback, a reader that
goes away (`| head`) ending the command quietly, and torch kept to the cores this process may use."""

from __future__ import annotations

import os
import re
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, get_origin

import typer
from pydantic import ValidationError
from pydantic_settings import SettingsError

from mcp_server.settings import Settings
from sandbox.errors import SandboxError
from skills_store.cores import usable_cores
from skills_store.errors import SkillStoreError

if TYPE_CHECKING:
    from rich.progress import Progress

    from skills_store.bank import SkillBank
    from skills_store.catalog import Catalog


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"skillbank: error: {message}", err=True)
    raise typer.Exit(code)


def unreachable_hint(error: str | None, spec: str) -> str | None:
    """A one-line hint naming the variable when the model endpoint could not be reached at all, or refused the key
    (`agent`, `distill`: exit 2, the configuration's fault); None for any other error (the model was reached, so the
    run failed)."""
    if error and (error.startswith(("ModelAuthenticationError", "_HTTPModelAuthenticationError"))
                  or "status_code: 401" in error):  # fmt: skip
        variable = "ANTHROPIC_API_KEY" if spec.startswith("anthropic:") else "OPENAI_API_KEY"
        return f"the model {spec!r} refused the key: {error.splitlines()[0][:300]}; check {variable}"
    if not error or not any(w in error for w in ("Connection error", "ConnectError", "connection refused", "404")):
        return None
    variable = "ANTHROPIC_BASE_URL" if spec.startswith("anthropic:") else "OPENAI_BASE_URL"
    where = os.environ.get(variable) or "the provider's default URL"
    return f"could not reach the model {spec!r} at {where}: {error.splitlines()[0]}; check {variable}"


#: Examples for the settings whose variable holds JSON, shown when the value is not JSON (a bare regex, a typo).
JSON_EXAMPLES = {
    "redact_patterns": """'["ACME-[0-9]+"]'""",
    "reward_weights": """'{"syntax": 0.2, "runtime": 0.2, "pass_rate": 0.6}'""",
}


def settings_problem(exc: ValidationError | SettingsError) -> str:
    """One line naming each bad `SKILLBANK_*` variable and what it needs.

    A value of the wrong type is pydantic's `ValidationError`; a variable of a JSON type (a list, an object) whose
    text is not JSON at all fails earlier, in pydantic-settings' environment source, as a `SettingsError` that
    names only the field: the variable and the form it needs are spelled out here.
    """
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"SKILLBANK_{'_'.join(str(p) for p in e['loc']).upper()}: {e['msg']}" for e in exc.errors()
        )
        return f"invalid settings: {problems}"
    found = re.search(r'field "(\w+)"', str(exc))
    if found is None:
        return f"invalid settings: {exc}"
    field = found.group(1)
    info = Settings.model_fields.get(field)
    origin = get_origin(info.annotation) if info else None
    kind = "a JSON list" if origin is list else "a JSON object" if origin is dict else "JSON"
    example = JSON_EXAMPLES.get(field)
    why = f" ({exc.__cause__})" if exc.__cause__ else ""
    return f"invalid settings: SKILLBANK_{field.upper()} is not JSON{why}; it needs {kind}" + (
        f", e.g. {example}" if example else ""
    )


def load_settings() -> Settings:
    try:
        return Settings()
    except (ValidationError, SettingsError) as exc:
        fail(settings_problem(exc))


def refuse_store_path(out: Path, home: Path, option: str = "--out") -> None:
    """Exit 2 when `out` lies in the data dir or is one of its files under another name (a symlink, a hard link).

    Writing an export there would truncate the store the command is reading (a tab-completed `--out
    ~/.local/share/skillbank/trajectories.db` emptied it). Called before anything is opened for writing.
    """
    try:
        target, root = out.resolve(), home.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        fail(f"{option} {out}: {exc}")
    if target.is_relative_to(root):
        fail(f"{option} {out} is inside the data dir {root}, whose files are the store itself; write it elsewhere")
    try:
        stat = target.stat()
    except OSError:
        return  # not there yet: a new file
    if stat.st_nlink > 1 and root.is_dir():
        for path in root.rglob("*"):
            if path.is_file() and path.stat()[1:3] == stat[1:3]:  # (inode, device): the same file
                fail(f"{option} {out} is {path} of the data dir under another name; write it elsewhere")


def refuse_archive_path(archive: Path | None, home: Path) -> None:
    """Exit 2 when an `--archive` file would be one of the store's files: inside the data dir outside its `archive/`
    folder (where the default archives go), or a store file under another name."""
    if archive is None:
        return
    try:
        inside = archive.resolve().is_relative_to((home / "archive").resolve())
    except (OSError, RuntimeError):
        inside = False
    if not inside:
        refuse_store_path(archive, home, "--archive")


def reader_gone() -> NoReturn:
    """stdout's reader closed the pipe (`skillbank ... | head`): stop writing and exit without a word.

    Exit status 1, as Click (under typer) gives a broken pipe anywhere else in a command. stdout is pointed at
    /dev/null first, so the interpreter's final flush cannot complain either.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file descriptor (a test runner's capture)
        pass
    raise typer.Exit(1)


@contextmanager
def clean_errors() -> Iterator[None]:
    """Our expected errors (bad input, bad configuration) end the command with a message, not a traceback."""
    try:
        yield
    except (SkillStoreError, SandboxError) as exc:
        fail(str(exc))
    except sqlite3.DatabaseError as exc:
        if exc.sqlite_errorcode not in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            raise
        fail(corrupt_database(exc))
    except BrokenPipeError:
        reader_gone()
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        fail(f"{where}{exc.strerror or exc}")
    except KeyboardInterrupt:
        sys.exit(130)


def corrupt_database(exc: sqlite3.DatabaseError) -> str:
    """What to do about a database found damaged in use (a page inside it, where opening it reads only the first
    ones): named by the store that read it, as a damaged file found on open is."""
    from skills_store.catalog import Catalog
    from skills_store.trajectories.store import SQLiteTrajectoryStore

    tb, store = exc.__traceback__, None
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if isinstance(owner, Catalog | SQLiteTrajectoryStore):
            store = owner
        tb = tb.tb_next
    if isinstance(store, Catalog):
        return (
            f"the skill catalog {store.path} is unreadable or corrupt ({exc}); move it away and run "
            "`skillbank skills reindex` to rebuild it from the Chroma store"
        )
    if isinstance(store, SQLiteTrajectoryStore):
        return (
            f"the trajectory store {store.path} is corrupt ({exc}); move it away (a new one is started; "
            f"`sqlite3 {store.path.name} .recover` may get back what it held)"
        )
    return f"a database of skillbank's data dir is corrupt ({exc})"


def cap_torch_threads() -> int:
    """Keep torch's thread pool to `usable_cores()`.

    Torch sizes its pool by the machine, not by what a container or `taskset` grants; more threads than cores
    made `skills dedupe` 3x slower on a busy 2-core machine. Before torch is imported, the environment variable
    it reads at start-up is set (an explicit OMP_NUM_THREADS wins); after, the pool is resized.
    """
    cores = usable_cores()
    torch = sys.modules.get("torch")
    if torch is not None:
        if torch.get_num_threads() > cores:
            torch.set_num_threads(cores)
    else:
        os.environ.setdefault("OMP_NUM_THREADS", str(cores))
    return cores


def open_bank_cli(settings: Settings) -> SkillBank:
    """`services.open_bank`, imported only when a command needs the bank (torch and Chroma load with it)."""
    from mcp_server.services import open_bank

    cap_torch_threads()
    return open_bank(settings)


def no_bank(home: Path) -> str:
    return (
        f"no skill bank at {home} yet: `skillbank serve` or `skillbank skills import FILE` creates one "
        "(seeded with the starter pack unless SKILLBANK_STARTER_SKILLS=0)"
    )


def _catalog_lost(settings: Settings) -> bool:
    """An embedded bank whose catalog is gone (deleted, not restored from a backup): its record is still there."""
    home = settings.home
    return settings.chroma_url is None and not (home / "catalog.db").is_file() and (home / "chroma").is_dir()


def bank_exists(settings: Settings, *, say: bool = True) -> bool:
    """Whether a bank was ever created here (or a Chroma server holds it); if not, say so on stderr (unless not
    `say`: the caller's error says it).

    Read-only commands never create a bank: on a fresh home they say this and exit 0 with nothing on stdout.
    """
    if settings.chroma_url is None and not (settings.home / "catalog.db").is_file() and not _catalog_lost(settings):
        if say:
            typer.echo(f"skillbank: {no_bank(settings.home)}", err=True)
        return False
    return True


def open_catalog(settings: Settings, *, say: bool = True) -> Catalog | None:
    """The catalog alone (list, show, export need no model and no Chroma); None, said on stderr (unless not `say`),
    on a fresh home."""
    from skills_store.catalog import Catalog

    path = settings.home / "catalog.db"
    if _catalog_lost(settings):
        fail(
            f"the skill catalog {path} is missing while {settings.home / 'chroma'} holds the skills: run "
            "`skillbank skills reindex` to rebuild it (`skillbank serve` and `skillbank skills search` do it too)"
        )
    if not path.is_file():
        if say:
            typer.echo(f"skillbank: {no_bank(settings.home)}", err=True)
        return None
    with clean_errors():
        return Catalog(path, readonly=True)


def progress_bar() -> Progress:
    """The CLI's progress display (phase, bar, count, time) on stderr, so stdout stays clean for results."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", style="progress.description", markup=False),  # a path or model name is data
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
