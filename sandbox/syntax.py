"""Checking that Python source compiles, without running it (shared by apply_patch and the run_tests reward)."""

from __future__ import annotations

import warnings


def syntax_error(source: bytes, filename: str) -> tuple[int | None, str] | None:
    """(line, message) of the first error that compiling `source` finds; None when it compiles.

    Bytes, so a coding declaration or a BOM is honoured. The compiler only: nothing is executed. Pathological
    input that exhausts the compiler (deep nesting, huge expressions) is reported, never raised.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc.lineno, exc.msg
    except (ValueError, UnicodeError, RecursionError, MemoryError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return None
