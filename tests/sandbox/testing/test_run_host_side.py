"""What run_tests does on the host, outside the sandbox, over files the tests could write: it never runs anything a
test planted (git filters), never blocks on a FIFO, stays within its time budget, and shows any file name as text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox.testing import changes
from sandbox.testing.changes import RepoMemory
from sandbox.testing.config import RunnerConfig
from sandbox.testing.results import parse_junit
from sandbox.testing.reward import check_syntax, syntax_budget_s
from sandbox.testing.runner import run_tests
from tests.sandbox.conftest import git

#: Slow to compile: about 2 s per file of this (2 MB of one long list display per line).
SLOW_SOURCE = ("x = [" + ",".join(["(a+b*c-d)"] * 1000) + "]\n") * 200


def plant_filter(repo: Path, marker: Path, *, git_dir: Path | None = None) -> None:
    """What a test can do to a repo it can write: a clean filter that writes `marker`, applied to every .py file."""
    where = ["--git-dir", str(git_dir)] if git_dir else []
    payload = f"sh -c 'echo ran > {marker}; cat'"
    subprocess.run(["git", *where, "config", "filter.x.clean", payload], cwd=repo, check=True)
    (repo / ".gitattributes").write_text("*.py filter=x\n")


def test_a_filter_planted_in_the_repo_config_is_never_run_by_the_syntax_check(make_workspace, tmp_path: Path) -> None:
    ws = make_workspace({"a.py": "x = 1\n", "b.py": "y = 2\n"})
    memory = RepoMemory()
    assert check_syntax(ws, memory=memory).checked == 0  # first sight: the repo as it was before any run
    marker = tmp_path / "filter-ran"
    plant_filter(ws, marker)
    (ws / "a.py").write_text("x = (\n")
    os.utime(ws / "b.py", (1, 1))  # stat-dirty, same content: `git diff` would hash it through the filter
    report = check_syntax(ws, memory=memory)
    assert not marker.exists()
    assert [(p.path, p.line) for p in report.problems] == [("a.py", 1)]
    assert report.checked == 1  # b.py has HEAD's content: not changed


def test_a_repo_a_test_creates_in_a_plain_workspace_is_never_used(make_workspace, tmp_path: Path) -> None:
    ws = make_workspace({"test_a.py": "def test_a():\n    pass\n"}, commit=False)
    memory = RepoMemory()
    assert check_syntax(ws, memory=memory).checked == 1  # no repo at first sight: every .py file
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "planted")
    marker = tmp_path / "filter-ran"
    plant_filter(ws, marker)
    (ws / "test_a.py").write_text("def test_a(:\n")
    report = check_syntax(ws, memory=memory)
    assert not marker.exists()
    assert [p.path for p in report.problems] == ["test_a.py"]


def test_a_git_init_after_the_first_run_is_not_used_and_the_result_says_so(make_workspace) -> None:
    """The server cannot tell a user's `git init` between runs from a test's: it keeps checking every file, but
    says so (and how to pick up the new repo) instead of silently listing files the user never changed."""
    ws = make_workspace({"mod.py": "x = 1\n", "vendor/old.py": "def f(:\n"}, commit=False)
    memory = RepoMemory()
    first = check_syntax(ws, memory=memory)
    assert ([p.path for p in first.problems], first.notes) == (["vendor/old.py"], [])
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    (ws / "mod.py").write_text("x = 2\n")
    report = check_syntax(ws, memory=memory)
    assert [p.path for p in report.problems] == ["vendor/old.py"]
    assert any("did not have when the server first saw it" in n and "restart the server" in n for n in report.notes)
    fresh = check_syntax(ws, memory=RepoMemory())
    assert (fresh.checked, fresh.problems, fresh.notes) == (1, [], [])


def test_a_redirected_worktree_git_file_is_not_followed(make_workspace, tmp_path: Path) -> None:
    main = make_workspace({"m.py": "x = 1\n"}, name="main")
    ws = tmp_path / "wt"
    git(main, "worktree", "add", "-q", str(ws))
    memory = RepoMemory()
    assert check_syntax(ws, memory=memory).checked == 0
    fake = ws / "fake.git"
    subprocess.run(["git", "init", "-q", "--bare", str(fake)], check=True)
    (ws / ".git").write_text(f"gitdir: {fake}\n")
    marker = tmp_path / "filter-ran"
    plant_filter(ws, marker, git_dir=fake)
    (ws / "m.py").write_text("x = (\n")
    report = check_syntax(ws, memory=memory)
    assert not marker.exists()
    assert [p.path for p in report.problems] == ["m.py"]
    assert any("not what it was when the server first saw it" in note for note in report.notes)


def test_a_workspace_inside_a_repo_gets_its_own_changed_files(make_workspace) -> None:
    repo = make_workspace({"top.py": "x = 1\n", "sub/pkg/m.py": "y = 2\n", "sub/n.py": "z = 3\n"})
    (repo / "top.py").write_text("x = (\n")
    (repo / "sub" / "pkg" / "m.py").write_text("y = (\n")
    (repo / "sub" / "new.py").write_text("w = 4\n")
    report = check_syntax(repo / "sub", memory=RepoMemory())
    assert report.checked == 2
    assert [p.path for p in report.problems] == ["pkg/m.py"]


def test_the_empty_git_placeholder_the_sandbox_mounts_is_not_a_changed_repo(make_workspace) -> None:
    """The sandbox mounts an empty read-only `.git` where a workspace has none: git ignores it, and so does this."""
    repo = make_workspace({"sub/n.py": "z = 3\n", "sub/m.py": "y = 2\n"})
    memory = RepoMemory()
    assert check_syntax(repo / "sub", memory=memory).checked == 0
    (repo / "sub" / ".git").mkdir()
    (repo / "sub" / "m.py").write_text("y = (\n")
    report = check_syntax(repo / "sub", memory=memory)
    assert (report.checked, [p.path for p in report.problems]) == (1, ["m.py"])
    assert not any("not what it was" in note for note in report.notes)


def test_a_file_rewritten_after_its_hash_was_remembered_is_checked_again(
    make_workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = make_workspace({"a.py": "x = 1\n"})
    monkeypatch.setattr(changes, "_CACHE_AFTER_NS", -(10**12))  # remember every hash, however recent
    memory = RepoMemory()
    assert check_syntax(ws, memory=memory).checked == 0
    (ws / "a.py").write_text("x = (\n")  # same size
    assert [p.path for p in check_syntax(ws, memory=memory).problems] == ["a.py"]


@pytest.mark.parametrize("commit", [True, False], ids=["git", "plain"])
def test_a_fifo_named_like_a_python_file_is_skipped_without_blocking(make_workspace, commit: bool) -> None:
    ws = make_workspace({"ok.py": "pass\n"}, commit=commit)
    os.mkfifo(ws / "x.py")
    report = check_syntax(ws, budget_s=30, memory=RepoMemory())
    assert report.checked == (0 if commit else 1)
    assert report.problems == []


def test_a_junit_report_replaced_by_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "junit.xml")
    report = parse_junit(tmp_path / "junit.xml")
    assert not report.found
    assert report.problem == "the junit report is not a regular file"


def test_the_syntax_check_stops_at_its_budget_and_says_so(make_workspace) -> None:
    ws = make_workspace({f"gen_{i}.py": SLOW_SOURCE for i in range(4)}, commit=False)
    started = time.monotonic()
    report = check_syntax(ws, budget_s=1.0, memory=RepoMemory())
    assert time.monotonic() - started < 3.0  # four files take about 8 s
    assert report.checked < 4
    assert any("stopped there (its 1 s budget ran out)" in note for note in report.notes)


def test_the_syntax_budget_is_a_tenth_of_the_timeout_between_one_and_ten_seconds() -> None:
    assert [syntax_budget_s(t) for t in (1, 5, 60, 3600)] == [1.0, 1.0, 6.0, 10.0]


def test_a_file_name_that_is_not_utf8_is_shown_quoted_as_git_does(make_workspace) -> None:
    ws = make_workspace({}, commit=False)
    with open(os.path.join(os.fsencode(ws), b"bad\xff.py"), "wb") as handle:
        handle.write(b"def f(:\n")
    report = check_syntax(ws, memory=RepoMemory())
    assert [p.path for p in report.problems] == ['"bad\\377.py"']
    json.dumps(report.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")


def test_run_tests_answers_when_a_test_leaves_a_fifo_as_its_junit_report(make_workspace, tmp_path: Path) -> None:
    conftest = (
        "import os\ndef pytest_unconfigure(config):\n    path = config.option.xmlpath\n"
        "    if path:\n        os.unlink(path)\n        os.mkfifo(path)\n"
    )
    ws = make_workspace({"test_a.py": "def test_a():\n    pass\n", "conftest.py": conftest})
    result = run_tests(ws, backend="local", timeout_s=30, config=RunnerConfig(test_python=sys.executable))
    assert result.status == "error"
    assert any("the junit report is not a regular file" in w for w in result.warnings), result.warnings
