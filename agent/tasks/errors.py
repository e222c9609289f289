"""Errors of task synthesis and grading, split by who must act (the CLI maps them to its exit codes).

- `SynthError`: the project cannot be turned into tasks (exit 1: the source could not be used).
- `SpecError`, `TestPythonError`: what the user typed or configured is wrong (exit 2), found before anything is
  written or run.
"""

from __future__ import annotations

from skills_store.errors import ConfigError, InvalidInput


class SynthError(RuntimeError):
    """The project cannot be turned into tasks (its tests do not pass or do not run); the message says why."""


class TraceError(SynthError):
    """The traced test run produced no line data (it crashed, or pytest could not start)."""


class SpecError(InvalidInput):
    """A `--pypi` spec that is not NAME==VERSION: bad input, refused before anything is downloaded."""


class TestPythonError(ConfigError):
    """The interpreter configured to run the tests does not exist or does not run; the message says what to pass."""

    __test__ = False  # not a pytest test class, whatever its name
