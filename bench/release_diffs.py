"""Real release diffs for the patch benchmarks: sdists from PyPI (cached), unpacked without binaries, diffed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

CACHE = Path(__file__).resolve().parents[1] / ".bench-cache" / "patch"
FIXED_MTIME = 1_704_067_200  # 2024-01-01: unpacked trees compare by content, not by time


def sdist(name: str, version: str) -> Path:
    target = CACHE / "sdists"
    target.mkdir(parents=True, exist_ok=True)
    archive = target / f"{name}-{version}.tar.gz"
    found = [p for p in target.glob("*.tar.gz") if p.name.lower() == archive.name.lower()]
    if not found:
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*pip, f"{name}=={version}", "-d", str(target)], check=True)
        found = [p for p in target.glob("*.tar.gz") if p.name.lower() == archive.name.lower()]
    return found[0]


def unpack(archive: Path, dest: Path) -> Path:
    """Unpack an sdist to `dest` (its top directory becomes `dest`) without binary files, links or empty files."""
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(archive) as tar:
        tar.extractall(tmp, filter="data")
        (top,) = Path(tmp).iterdir()
        shutil.copytree(top, dest, symlinks=True)
    for path in sorted(dest.rglob("*"), reverse=True):
        if path.is_symlink():
            path.unlink()
        elif path.is_file():
            data = path.read_bytes()
            if not data or b"\x00" in data:
                path.unlink()
            else:
                os.utime(path, (FIXED_MTIME, FIXED_MTIME))
    return dest


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def diff_trees(parent: Path, old: str, new: str) -> bytes:
    done = subprocess.run(["diff", "-ruN", old, new], cwd=parent, capture_output=True, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stderr.decode())
    return done.stdout
