"""`RunnerConfig`: everything `run_tests` can be configured with, built once from the settings by the caller."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, PrivateAttr, field_validator

from sandbox.exec.docker import DockerConfig
from sandbox.exec.image import DEFAULT_IMAGE
from sandbox.exec.local import LocalConfig
from sandbox.testing.changes import RepoMemory
from sandbox.testing.reward import DEFAULT_WEIGHTS, normalise_weights


class RunnerConfig(BaseModel):
    """How tests are run, reported and scored. The caller maps `Settings` onto it: `test_python`,
    `reward_weights`, `docker_image`, and `home` into `hidden_paths`."""

    test_python: str | None = None
    """Interpreter of the default command when the workspace has no `.venv` (SKILLBANK_TEST_PYTHON); a path or a
    name on PATH. Unset: `python` (or `python3`) on PATH."""
    reward_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    """Weights of the reward components `syntax`, `runtime`, `pass_rate`; normalised to sum to 1."""
    docker_image: str = DEFAULT_IMAGE
    """Image of the Docker backend; build it with `skillbank sandbox build-image`."""
    local: LocalConfig = Field(default_factory=LocalConfig)
    """Limits and isolation of the local backend."""
    docker: DockerConfig = Field(default_factory=DockerConfig)
    """Limits of the Docker backend."""
    hidden_paths: list[Path] = Field(default_factory=list)
    """Host paths no test may see, in either backend: the skillbank data dir (`trajectories.db`, `catalog.db`,
    `chroma/`, i.e. other sessions' history). The caller sets it from `Settings.home`."""
    max_tests: int = Field(default=500, ge=1)
    """Most tests listed in a result; failures come first, passing and skipped ones are left out beyond this."""
    message_chars: int = Field(default=1500, ge=80)
    """Longest message kept per test (the crash line and the end of the traceback)."""
    output_tail_chars: int = Field(default=8000, ge=200)
    """Longest `output_tail` in a result."""

    _repo_memory: RepoMemory = PrivateAttr(default_factory=RepoMemory)

    @property
    def repo_memory(self) -> RepoMemory:
        """The git repository each workspace showed when this config first checked it (before any of its runs),
        which the syntax reward keeps using (`sandbox.testing.changes`): build one config per server."""
        return self._repo_memory

    @field_validator("reward_weights")
    @classmethod
    def _check_weights(cls, value: dict[str, float]) -> dict[str, float]:
        normalise_weights(value)
        return value
