"""The release diffs' sdist cache: an archive already there is found whatever the case of its name."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import release_diffs


@pytest.mark.parametrize(("asked", "stored"), [("PyYAML", "PyYAML"), ("pyyaml", "PyYAML"), ("PyYAML", "pyyaml")])
def test_a_cached_sdist_is_found_whatever_the_case_of_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, asked: str, stored: str
) -> None:
    monkeypatch.setattr(release_diffs, "CACHE", tmp_path)
    (tmp_path / "sdists").mkdir()
    archive = tmp_path / "sdists" / f"{stored}-6.0.2.tar.gz"
    archive.write_bytes(b"")

    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cached sdist was downloaded again")

    monkeypatch.setattr(release_diffs.subprocess, "run", no_download)
    assert release_diffs.sdist(asked, "6.0.2") == archive
