"""`skillbank demo` (what `make demo` runs): the whole loop must close, offline."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from mcp_server.demo import run_demo

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.minilm]


def test_the_lesson_of_session_one_reaches_session_two_and_gains_confidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLBANK_EMBEDDER", raising=False)
    out = io.StringIO()
    run_demo(tmp_path / "home", console=Console(file=out, width=200, soft_wrap=True))
    text = out.getvalue()
    assert text.count("run_tests: FAILED") == 2
    assert text.count("run_tests: PASSED") == 2
    assert "1 new skill(s)" in text
    learned = re.search(
        r"reached session 2 (?:as a suggested skill of run_tests|through search_skills \(relevance [\d.]+, under the "
        r"suggestion threshold\)): \[(sk-\w+)\]; confidence ([\d.]+) -> ([\d.]+)",
        text,
    )
    assert learned is not None, text
    # The KeyError failures once came back with these unrelated starter skills; they are no longer suggested.
    suggested = "".join(re.findall(r"suggested_skills:\n((?: {7}.*\n)+)", text))
    assert "not a function" not in suggested
    assert "floating-point" not in suggested
    assert float(learned.group(3)) > float(learned.group(2))
