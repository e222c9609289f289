"""A refusal quotes at most a few hundred characters of each line (a minified file's line is a whole bundle),
around where the hunk's line and the file's differ."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch
from sandbox.patch.textfile import MAX_QUOTED_CHARS, clip


def test_a_refusal_on_a_minified_file_quotes_each_long_line_cut_around_the_difference(tmp_path: Path) -> None:
    line = "var a=1;" * 50_000
    (tmp_path / "x.min.js").write_text(line + "\n//end\n")
    stale = line[:200_000] + "var b=2;" + line[200_008:]
    patch = f"--- a/x.min.js\n+++ b/x.min.js\n@@ -1,2 +1,2 @@\n-{stale}\n+{stale}x\n //end\n"
    with pytest.raises(PatchError) as refused:
        apply_patch(tmp_path, patch)
    message = str(refused.value)
    assert len(message) < 5_000
    assert max(len(row) for row in message.splitlines()) < MAX_QUOTED_CHARS + 100
    assert "characters ...]" in message
    assert "from column 200005: b=2;" in message  # where they differ, shown from the hunk's side
    assert (tmp_path / "x.min.js").read_text() == line + "\n//end\n"


def test_a_short_line_is_quoted_whole_and_a_long_one_says_how_much_was_cut() -> None:
    assert clip("x = 1") == "x = 1"
    cut = clip("a" * 1000 + "B" + "c" * 1000, around=1000)
    assert cut.startswith("[... 950 characters ...]")
    assert "B" in cut
    assert cut.endswith("[... 851 characters ...]")
