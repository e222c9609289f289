"""`python -m bench --collect` pastes the reports of docs/benchmarks/ into docs/benchmarks.md: links still work."""

from __future__ import annotations

import re
from pathlib import Path

from bench.__main__ import _relink

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_relative_links_of_a_report_point_into_its_folder_and_others_stay() -> None:
    text = "see [the stdio run](search_stdio.md), [top](#top), [site](https://x.org/a.md) and [abs](/etc/x.md)"
    assert _relink(text, "benchmarks") == (
        "see [the stdio run](benchmarks/search_stdio.md), [top](#top), [site](https://x.org/a.md) and [abs](/etc/x.md)"
    )


def test_every_relative_link_of_the_collected_page_names_a_file_that_exists() -> None:
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", page)
    local = [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]
    assert [t for t in local if not (DOCS / t).exists()] == []
