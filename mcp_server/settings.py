"""Settings, read once at the entry point (the CLI) and passed down as constructor arguments.

Every field can be set with an environment variable `SKILLBANK_<FIELD>` (for example `SKILLBANK_HOME`).
Library code never reads the environment itself.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sandbox.exec.image import DEFAULT_IMAGE
from sandbox.testing.reward import DEFAULT_WEIGHTS, normalise_weights


def default_home() -> Path:
    return Path(user_data_dir("skillbank", appauthor=False))


def absolute_path(path: Path) -> Path:
    """`path` with `~` expanded, made absolute against this process's working directory.

    Settings are handed on to processes that run elsewhere (the server the bundled agent spawns runs in the
    workspace, a client starts the installed server in its own cwd), so a relative `SKILLBANK_HOME=data` must be
    pinned to the directory it meant where it was typed, not re-read in the child's cwd."""
    return path.expanduser().absolute()


def absolute_program(program: str) -> str:
    """A program given as a path (`.venv/bin/python`, `~/py/bin/python`) made absolute like `absolute_path`; a bare
    name (`python3`) is left as it is, for a PATH lookup."""
    if os.sep in program or program.startswith("~"):
        return str(absolute_path(Path(program)))
    return program


EMBEDDER_FORMS = (
    "'minilm' ('minilm:int8', 'minilm:onnxruntime', 'minilm:torch'), 'sentence-transformers:<model name or path>', "
    "'hash' or 'hash:<dimension, at least 8>'"
)


def check_embedder(spec: str) -> None:
    """Refuse (`ValueError`) an embedder spec the factory (`skills_store.embedders.specs.build_inner`) would refuse
    when the first search builds it, so that `serve` stops at start-up instead. Loads no model."""
    from skills_store.embedders.specs import MINILM_SPECS

    if spec in MINILM_SPECS:
        if MINILM_SPECS[spec] in ("int8", "onnxruntime") and importlib.util.find_spec("onnxruntime") is None:
            raise ValueError(f"embedder {spec!r}: onnxruntime is not installed (make install), or use 'minilm:torch'")
        return
    if spec.startswith("sentence-transformers:"):
        if spec.partition(":")[2].strip():
            return
        raise ValueError(f"embedder {spec!r} names no model: write sentence-transformers:<model name or path>")
    if spec == "hash" or spec.startswith("hash:"):
        from skills_store.embedders.specs import build_inner
        from skills_store.errors import ConfigError

        try:
            build_inner(spec)  # the hash embedder is a few numbers: building it is the exact check
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        except ValueError as exc:
            raise ValueError(f"bad embedder {spec!r}: the hash {exc} (hash:384)") from None
        return
    raise ValueError(f"unknown embedder {spec!r}: use {EMBEDDER_FORMS}")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SKILLBANK_", extra="ignore")

    home: Path = Field(default_factory=default_home)
    """Data dir: `trajectories.db`, `catalog.db`, `chroma/`. A relative path is made absolute when the settings are
    read (`absolute_path`), so every child process gets the same directory."""
    chroma_url: str | None = None
    """`http://host:8000` to use a Chroma server (`chroma run --path DIR`) instead of the embedded store."""
    token: SecretStr | None = None
    """Bearer token required by the HTTP transport when it binds anything but loopback."""
    workspace: Path | None = None
    """The repository the tools act on; defaults to the current directory when the server starts."""
    starter_skills: bool = True
    """Load the bundled starter pack into an empty store on first start."""
    embedder: str = "minilm"
    """`minilm` (packaged all-MiniLM-L6-v2), `sentence-transformers:<name or path>`, or `hash` (tests only)."""
    test_python: str | None = None
    """Interpreter for the default test command when the workspace has no `.venv`."""
    sandbox: Literal["auto", "local", "docker"] = "auto"
    """Default sandbox backend for `run_tests`."""
    docker_image: str = DEFAULT_IMAGE
    """Image used by the Docker sandbox; build it with `skillbank sandbox build-image`."""
    reward_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    """Weights of the `run_tests` reward components; they are normalised to sum to 1."""
    redact_patterns: list[str] = Field(default_factory=list)
    """Extra regular expressions whose matches are redacted before anything is stored."""
    no_skills: bool = False
    """Ablation mode (`skillbank serve --no-skills`): `search_skills` is not listed and `run_tests` suggests none."""
    suggest_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """Suggestions (`run_tests`, the Claude Code hook, the bundled agent's first prompt) carry only skills whose
    calibrated relevance reaches this; default: the value chosen on the
    train split of the labelled set (docs/benchmarks/relevance.md)."""
    review: bool | None = None
    """Newly distilled skills are `candidate`s, served by nothing until `skills approve ID`. Default: on for
    `serve --transport http` (a shared bank), off for stdio and the CLI."""
    distill_on_close: bool = False
    """Run the heuristic distiller in the background whenever a trajectory closes."""
    prune_unused_days: int = Field(default=90, ge=1)
    """`skills prune` removes skills under 0.5 confidence not used for this many days."""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"

    @field_validator("home", "workspace")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        return None if value is None else absolute_path(value)

    @field_validator("test_python")
    @classmethod
    def _absolute_python(cls, value: str | None) -> str | None:
        return absolute_program(value) if value else value

    @field_validator("embedder")
    @classmethod
    def _check_embedder(cls, value: str) -> str:
        check_embedder(value)  # raises ValueError saying what to use
        return value

    @field_validator("reward_weights")
    @classmethod
    def _check_weights(cls, value: dict[str, float]) -> dict[str, float]:
        normalise_weights(value)  # raises ValueError saying what to change
        return value
