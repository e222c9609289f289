"""A patch holds every directory it reaches open until it is written (see `sandbox.patch.dirs`): one that reaches
more directories than the soft limit of open files allows raises that limit to the hard one, and one that does not
fit even then is refused whole, with how to fix it, never half written."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

#: Runs apply_patch on argv[1] (a workspace) under the open-files limits argv[2] (soft, hard; -1: as they are).
SCRIPT = textwrap.dedent(
    """
    import json, os, resource, sys
    sys.path.insert(0, sys.argv[4])
    from sandbox.errors import PatchError
    from sandbox.patch import apply_patch

    ws, soft, hard = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    now = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard if hard >= 0 else now[1]))
    fds = len(os.listdir("/proc/self/fd"))
    try:
        result = apply_patch(ws, sys.stdin.read(), check_syntax=False)
        out = {"applied": len(result.files)}
    except PatchError as exc:
        out = {"refused": str(exc)}
    out["soft"] = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    out["fds_left"] = len(os.listdir("/proc/self/fd")) - fds
    print(json.dumps(out))
    """
)


def workspace(tmp_path: Path, dirs: int) -> tuple[Path, str]:
    """`dirs` directories, each with a file the patch changes and a new one beside it in a new subdirectory."""
    ws = tmp_path / "ws"
    parts = []
    for i in range(dirs):
        (ws / f"d{i}").mkdir(parents=True)
        (ws / f"d{i}" / "f.txt").write_text("a\n")
        parts.append(f"--- a/d{i}/f.txt\n+++ b/d{i}/f.txt\n@@ -1 +1 @@\n-a\n+b\n")
        parts.append(f"--- /dev/null\n+++ b/d{i}/new/g.txt\n@@ -0,0 +1 @@\n+g\n")
    return ws, "".join(parts)


def apply_under(ws: Path, patch: str, soft: int, hard: int) -> dict[str, object]:
    """What `SCRIPT` printed: the files applied or the refusal, the soft limit after, the files left open."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ws), str(soft), str(hard), str(ROOT)],
        input=patch, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


@pytest.fixture(autouse=True)
def _linux_only() -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("counts open files in /proc/self/fd")


def test_a_patch_reaching_more_directories_than_the_soft_limit_raises_it_and_applies(tmp_path: Path) -> None:
    ws, patch = workspace(tmp_path, 300)

    out = apply_under(ws, patch, soft=256, hard=-1)

    assert out["applied"] == 600
    assert isinstance(out["soft"], int)
    assert out["soft"] > 256
    assert out["fds_left"] == 0
    assert (ws / "d299" / "f.txt").read_text() == "b\n"
    assert (ws / "d299" / "new" / "g.txt").read_text() == "g\n"


@pytest.mark.parametrize("dirs", [300, 150], ids=["planning", "creating directories"])
def test_a_patch_that_cannot_fit_under_the_hard_limit_is_refused_whole(tmp_path: Path, dirs: int) -> None:
    ws, patch = workspace(tmp_path, dirs)  # 150: the existing ones fit, the new ones below them do not

    out = apply_under(ws, patch, soft=256, hard=256)

    assert "applied" not in out
    assert "may hold only 256 files open" in str(out["refused"])
    assert "split the patch" in str(out["refused"])
    assert out["fds_left"] == 0
    assert all((ws / f"d{i}" / "f.txt").read_text() == "a\n" for i in range(dirs))
    assert not list(ws.glob("d*/new"))
    assert not list(ws.rglob(".skillbank-patch-*"))
