"""Problem statements for synthesized tasks, written from what the failing tests print, never from the fix.

Offline, the statement lists the failing tests and quotes the first failure. With a model, the model rewrites
that evidence as an issue report. Either way, any line that repeats a line the gold patch adds is removed, and a
model's text that still gives the fix away is replaced by the offline statement.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sandbox.testing.models import TestCase

if TYPE_CHECKING:
    from pydantic_ai.models import Model

MAX_LISTED = 10
MAX_QUOTE = 1500
INSTRUCTIONS = (
    "You write GitHub issue reports. From the failing test output you are given, write a short issue (under 200 "
    "words) describing the wrong behaviour a user sees: what was called, what was expected, what happened. Name "
    "the failing tests. Do not guess or propose a fix, do not write code that would fix it, and do not mention "
    "mutations or generated tasks."
)


def fix_lines(gold_patch: str) -> list[str]:
    """The lines the fix adds, stripped (only ones distinctive enough to recognise)."""
    out = []
    for line in gold_patch.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            text = " ".join(line[1:].split())
            if len(text.replace(" ", "")) >= 6 and any(ch.isalnum() for ch in text):
                out.append(text)
    return out


def leaks_fix(statement: str, gold_patch: str) -> bool:
    normalised = " ".join(statement.split())
    return any(line in normalised for line in fix_lines(gold_patch))


def scrub(text: str, gold_patch: str) -> str:
    """`text` without the lines that contain a line of the fix."""
    fixes = fix_lines(gold_patch)
    kept = [line for line in text.splitlines() if not any(f in " ".join(line.split()) for f in fixes)]
    return "\n".join(kept)


def evidence(failures: Sequence[TestCase]) -> tuple[list[str], str]:
    ids = [case.id for case in failures]
    first = next((case.message for case in failures if case.message), "") or "(the test printed no message)"
    return ids, first[-MAX_QUOTE:]


def offline_statement(project: str, failures: Sequence[TestCase], gold_patch: str) -> str:
    ids, first = evidence(failures)
    listed = "\n".join(f"- `{t}`" for t in ids[:MAX_LISTED])
    more = f"\n- ... and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
    quote = scrub(first, gold_patch)
    return (
        f"{len(ids)} test(s) of {project} fail:\n\n{listed}{more}\n\nThe first failure:\n\n```\n{quote}\n```\n\n"
        "Fix the code so that these tests pass and the rest of the suite still passes. Do not change the tests."
    )


def model_statement(
    model: Model, project: str, failures: Sequence[TestCase], gold_patch: str, runner: asyncio.Runner | None = None
) -> tuple[str, int]:
    """(statement, tokens used) written by `model`; falls back to the offline statement when it leaks the fix.

    `runner` is the event loop the requests run on: one for a whole synthesis, so the model's HTTP client keeps
    one loop (a throwaway runner is used without it)."""
    from pydantic_ai import Agent

    ids, first = evidence(failures)
    listed = "\n".join(ids[:MAX_LISTED])
    prompt = f"Project: {project}\nFailing tests:\n{listed}\n\nOutput:\n{scrub(first, gold_patch)}"
    agent: Agent[None, str] = Agent(model, instructions=INSTRUCTIONS, output_type=str)
    if runner is None:
        with asyncio.Runner() as own:
            result = own.run(agent.run(prompt))
    else:
        result = runner.run(agent.run(prompt))
    tokens = result.usage.total_tokens or 0
    text = scrub(result.output.strip(), gold_patch)
    if not text.strip() or leaks_fix(text, gold_patch):
        return offline_statement(project, failures, gold_patch), tokens
    return text, tokens
