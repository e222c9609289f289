"""The Docker container's spec, without an engine: how the workspace's `.git` is mounted whatever it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.exec.docker import DockerConfig, DockerSandbox


def _spec(ws: Path, tmp_path: Path) -> dict[str, Any]:
    return DockerSandbox(ws, config=DockerConfig(state_dir=tmp_path / "state"))._spec()


def test_spec_mounts_a_git_dir_read_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    spec = _spec(ws, tmp_path)
    assert spec["volumes"][str(ws / ".git")] == {"bind": str(ws / ".git"), "mode": "ro"}
    assert str(ws / ".git") not in spec["tmpfs"]


def test_spec_mounts_a_worktree_git_file_and_its_gitdir_inside_the_workspace_read_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "meta").mkdir(parents=True)
    (ws / ".git").write_text("gitdir: meta\n")
    volumes = _spec(ws, tmp_path)["volumes"]
    assert volumes[str(ws / ".git")]["mode"] == "ro"
    assert volumes[str(ws / "meta")]["mode"] == "ro"


def test_spec_puts_an_empty_read_only_tmpfs_where_the_workspace_has_no_git(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    spec = _spec(ws, tmp_path)
    assert spec["tmpfs"][str(ws / ".git")].startswith("ro,")
    (ws / ".git").mkdir()  # the mount point the engine made: the spec (and so the warm container) stays the same
    assert _spec(ws, tmp_path) == spec
