"""The data dir's start-up check: a dir that cannot be written is refused with the fix its cause calls for."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from skills_store import datadir
from skills_store.datadir import check_data_dir
from skills_store.errors import ConfigError


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        (errno.EROFS, "mounted read-only: set SKILLBANK_HOME to a directory on a writable one"),
        (errno.ENOSPC, "its disk is full"),
        (errno.EACCES, "fix its permissions or set SKILLBANK_HOME"),
    ],
)
def test_an_unwritable_data_dir_is_refused_with_the_fix_for_its_cause(
    code: int, fix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(datadir.tempfile, "mkstemp", refuse)
    with pytest.raises(ConfigError, match="is not writable") as info:
        check_data_dir(tmp_path / "home")
    assert fix in str(info.value)
    assert os.strerror(code) in str(info.value)


def test_a_writable_data_dir_is_made_and_left_clean(tmp_path: Path) -> None:
    check_data_dir(tmp_path / "a" / "home")
    assert list((tmp_path / "a" / "home").iterdir()) == []
