"""Errors of task synthesis: the project cannot be turned into tasks, and the message says why."""

from __future__ import annotations


class SynthError(RuntimeError):
    """The project cannot be turned into tasks (its tests do not pass or do not run); the message says why."""


class TraceError(SynthError):
    """The traced test run produced no line data (it crashed, or pytest could not start)."""
