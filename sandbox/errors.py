"""Errors of the sandbox package, split by who must act.

Failures of the thing under test (a failing test, a non-zero exit, a timeout) are data in the result models,
never exceptions; so is a cancelled run, except to the caller that cancelled it (`RunCancelled`). The other
exceptions fall in two families:

- `RequestRefused`: the caller's input is wrong (a bad argument, a patch that does not apply, a path outside the
  workspace). The message tells the caller (often a model) what to change; nothing was done.
- `SandboxUnavailable`: the environment or the configuration is wrong (no Docker engine, the image not built,
  the configured test interpreter missing, the workspace gone, a write the OS refused). The operator must act;
  `workaround`, when set, is what the caller can do meanwhile (another backend, an explicit `command`).
"""

from __future__ import annotations


class SandboxError(Exception):
    """Base class for every error raised by `sandbox`."""


class RunCancelled(SandboxError):
    """A test run was stopped because its caller cancelled it (`sandbox.exec.base.Cancel`): nothing to report."""


class RequestRefused(SandboxError):
    """The caller (often a model) asked for something that must be refused; the message says how to fix it."""


class PatchError(RequestRefused):
    """A patch was refused (malformed, does not match, ambiguous, outside the workspace). Nothing was written."""


class SandboxUnavailable(SandboxError):
    """The environment or configuration is wrong and the operator must fix it; the message says how."""

    def __init__(self, message: str, *, workaround: str | None = None) -> None:
        super().__init__(message)
        self.workaround = workaround
        """What the caller can do without the operator (e.g. `use backend='local'`), or None."""


class SandboxConfigError(SandboxUnavailable):
    """A setting is wrong: the configured test interpreter, the scratch dir, the workspace the server serves."""


class BackendUnavailable(SandboxUnavailable):
    """The requested sandbox backend cannot run here (no Docker engine, no image, the engine refused)."""

    def __init__(self, message: str, *, workaround: str | None = "use backend='local'") -> None:
        super().__init__(message, workaround=workaround)


class InterpreterNotFound(SandboxConfigError):
    """No Python exists for the default test command; the message says how to provide one (or pass `command`)."""


class WorkspaceUnavailable(SandboxConfigError):
    """The workspace the server serves is missing or not a directory."""


class WriteFailed(SandboxUnavailable):
    """The operating system refused a patch's write (disk full, permissions); everything was rolled back."""
