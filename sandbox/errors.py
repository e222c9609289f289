"""Errors of the sandbox package, split by who must act.

Failures of the thing under test (a failing test, a non-zero exit, a timeout) are data in the result models,
never exceptions. These exceptions are for requests that must be refused or for a broken setup.
"""


class SandboxError(Exception):
    """Base class for every error raised by `sandbox`."""


class RequestRefused(SandboxError):
    """The caller (often a model) asked for something that must be refused; the message says how to fix it."""


class PatchError(RequestRefused):
    """A patch was refused (malformed, does not match, ambiguous, outside the workspace). Nothing was written."""


class BackendUnavailable(SandboxError):
    """The requested sandbox backend cannot run here (no Docker engine, no image)."""


class InterpreterNotFound(RequestRefused):
    """No Python exists for the default test command; the message says how to provide one (or pass `command`)."""
