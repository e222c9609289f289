"""One repo identity for a workspace, whichever way a trajectory was captured."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills_store.repo_identity import repo_identity


def _git(root: Path, url: str | None = None) -> Path:
    (root / ".git").mkdir(parents=True)
    config = "[core]\n\tbare = false\n"
    if url:
        config += f'[remote "origin"]\n\turl = {url}\n'
    (root / ".git" / "config").write_text(config)
    return root


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/api.git",
        "https://github.com/acme/api",
        "https://gitlab.example/acme/api.git/",
        "ssh://git@h/acme/api",
    ],
)
def test_the_origin_remote_gives_owner_and_name(tmp_path: Path, url: str) -> None:
    assert repo_identity(_git(tmp_path / "checkout", url)) == "acme/api"


def test_without_a_remote_the_repository_root_directory_names_it(tmp_path: Path) -> None:
    root = _git(tmp_path / "parser")
    assert repo_identity(root) == "parser"


def test_a_subdirectory_has_the_identity_of_its_repository(tmp_path: Path) -> None:
    root = _git(tmp_path / "checkout", "git@github.com:acme/api.git")
    (root / "src" / "pkg").mkdir(parents=True)
    assert repo_identity(root / "src" / "pkg") == "acme/api"
    assert repo_identity(str(root / "src")) == "acme/api"


def test_a_worktree_reads_the_config_of_its_main_repository(tmp_path: Path) -> None:
    main = _git(tmp_path / "main", "https://github.com/acme/api.git")
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    assert repo_identity(tree) == "acme/api"


def test_outside_any_repository_the_directory_name_is_used(tmp_path: Path) -> None:
    plain = tmp_path / "scratch"
    plain.mkdir()
    assert repo_identity(plain) == "scratch"
    assert repo_identity(Path("/")) is None


def test_an_unreadable_config_falls_back_to_the_directory_name(tmp_path: Path) -> None:
    root = tmp_path / "odd"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_bytes(b"\xff\xfe[remote")
    assert repo_identity(root) == "odd"
