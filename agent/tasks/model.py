"""Task folders: the contract between `skillbank tasks synth` (writes them) and `skillbank eval` (reads them).

One folder per task (DESIGN.md, task folders):

    <task_id>/task.json    task_id, problem_statement, fail_to_pass, pass_to_pass, bug_class, source
    <task_id>/repo/        the broken tree, complete and runnable
    <task_id>/gold.patch   the fix, a -p1 unified diff with a/ b/ prefixes that touches no test file

Reading checks all of it and names the folder and what is wrong, so a hand-edited or truncated suite fails before
any model is paid for.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.tasks.files import copy_repo
from skills_store.errors import InvalidInput

TASK_FILE = "task.json"
REPO_DIR = "repo"
GOLD_PATCH = "gold.patch"
TASK_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_DIFF_PATH_RE = re.compile(r"^(?:---|\+\+\+) (\S+)", re.MULTILINE)


class TaskError(InvalidInput):
    """A task folder (or a task being written) breaks the contract; the message names the folder and the fault."""


class MutationInfo(BaseModel):
    """Where the synthesizer broke the code (for reports; solvers are never shown it)."""

    operator: str
    path: str
    line: int
    description: str


class Task(BaseModel):
    """`task.json`. Node ids are relative to the repo root, as pytest prints them from there."""

    model_config = ConfigDict(extra="ignore")

    task_id: str
    problem_statement: str = Field(min_length=1)
    fail_to_pass: list[str] = Field(min_length=1)
    """Tests that fail on the broken tree and pass with the fix."""
    pass_to_pass: list[str] = Field(default_factory=list)
    """Tests that pass on both."""
    bug_class: str = Field(min_length=1)
    source: str = Field(min_length=1)
    """Where the code came from: `repo:<name>`, `pypi:<name>==<version>`, or a benchmark's name."""
    mutation: MutationInfo | None = None

    @field_validator("task_id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not TASK_ID_RE.match(value):
            raise ValueError("task_id must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit")
        return value

    @field_validator("fail_to_pass", "pass_to_pass")
    @classmethod
    def _check_ids(cls, value: list[str]) -> list[str]:
        for test_id in value:
            path = test_id.split("::", 1)[0]
            if not test_id.strip() or path.startswith("/") or ".." in PurePosixPath(path).parts:
                raise ValueError(f"{test_id!r} is not a pytest node id relative to the repo root")
        return value


class TaskFolder(BaseModel):
    """A task as read from disk."""

    task: Task
    path: Path
    gold_patch: str

    @property
    def repo(self) -> Path:
        return self.path / REPO_DIR

    @property
    def graded_tests(self) -> list[str]:
        return list(dict.fromkeys([*self.task.fail_to_pass, *self.task.pass_to_pass]))


def is_test_path(path: str) -> bool:
    """Whether a repo-relative path is a test file (the gold patch must not touch one)."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    in_tests = any(part in ("tests", "test", "testing") for part in parts[:-1])
    return in_tests or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def patch_paths(patch: str) -> list[str]:
    """The repo-relative paths a -p1 unified diff touches; raises ValueError for paths without a/ b/ prefixes."""
    paths: list[str] = []
    for raw in _DIFF_PATH_RE.findall(patch):
        if raw == "/dev/null":
            continue
        if not raw.startswith(("a/", "b/")):
            raise ValueError(f"path {raw!r} has no a/ or b/ prefix (the gold patch is a -p1 diff)")
        rel = raw[2:]
        if rel not in paths:
            paths.append(rel)
    return paths


def check_gold_patch(patch: str) -> list[str]:
    """The paths of a valid gold patch; a ValueError says what is wrong with it."""
    if not patch.strip():
        raise ValueError("the gold patch is empty")
    paths = patch_paths(patch)
    if not paths or "\n@@ " not in "\n" + patch:
        raise ValueError("the gold patch is not a unified diff (no ---/+++ headers and @@ hunks)")
    tests = [p for p in paths if is_test_path(p)]
    if tests:
        raise ValueError(f"the gold patch touches test file(s) {', '.join(tests)}; the fix must be in the code")
    return paths


def read_task(folder: Path) -> TaskFolder:
    """Read and check one task folder."""
    where = str(folder)
    task_file = folder / TASK_FILE
    if not task_file.is_file():
        raise TaskError(f"{where}: no {TASK_FILE} (is this a task folder?)")
    try:
        task = Task.model_validate(json.loads(task_file.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TaskError(f"{task_file}: not valid JSON: {exc}") from exc
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'task'}: {e['msg']}" for e in exc.errors())
        raise TaskError(f"{task_file}: {problems}") from exc
    repo = folder / REPO_DIR
    if not repo.is_dir():
        raise TaskError(f"{where}: no {REPO_DIR}/ directory with the broken tree")
    gold_file = folder / GOLD_PATCH
    if not gold_file.is_file():
        raise TaskError(f"{where}: no {GOLD_PATCH}")
    gold = gold_file.read_text(encoding="utf-8")
    try:
        paths = check_gold_patch(gold)
    except ValueError as exc:
        raise TaskError(f"{gold_file}: {exc}") from exc
    missing = [p for p in paths if not (repo / p).is_file()]
    if missing:
        raise TaskError(f"{gold_file}: patches {', '.join(missing)}, which {REPO_DIR}/ does not contain")
    test_files = {t.split("::", 1)[0] for t in task.fail_to_pass + task.pass_to_pass}
    absent = sorted(p for p in test_files if not (repo / p).exists())
    if absent:
        raise TaskError(f"{task_file}: tests name file(s) missing from {REPO_DIR}/: {', '.join(absent[:5])}")
    return TaskFolder(task=task, path=folder, gold_patch=gold)


def write_task(out_dir: Path, task: Task, repo: Path, changes: dict[str, str], gold_patch: str) -> Path:
    """Write `out_dir/<task_id>`: a copy of `repo` with `changes` (path -> text) applied, the gold patch and
    task.json. Refused if the folder exists; written under a temp name first, so a crash leaves no half task."""
    try:
        check_gold_patch(gold_patch)
    except ValueError as exc:
        raise TaskError(f"task {task.task_id}: {exc}") from exc
    folder = out_dir / task.task_id
    if folder.exists():
        raise TaskError(f"{folder} exists already; choose another --out or remove it")
    partial = out_dir / f".{task.task_id}.partial"
    if partial.exists():
        shutil.rmtree(partial)
    copy_repo(repo, partial / REPO_DIR)
    for rel, text in changes.items():
        (partial / REPO_DIR / rel).write_text(text, encoding="utf-8")
    (partial / GOLD_PATCH).write_text(gold_patch, encoding="utf-8")
    (partial / TASK_FILE).write_text(task.model_dump_json(indent=2, exclude_none=True) + "\n", encoding="utf-8")
    partial.rename(folder)
    return folder


def iter_task_dirs(root: Path) -> Iterator[Path]:
    """Task folders under `root`: `root` itself if it is one, else its subfolders holding a task.json, sorted."""
    if (root / TASK_FILE).is_file():
        yield root
        return
    for child in sorted(root.iterdir()):
        if child.is_dir() and (child / TASK_FILE).is_file():
            yield child


def load_tasks(root: Path) -> list[TaskFolder]:
    """Every task under `root`, checked; a TaskError for a missing dir, an empty one, or duplicate ids."""
    if not root.is_dir():
        raise TaskError(f"{root}: no such directory of tasks")
    tasks = [read_task(folder) for folder in iter_task_dirs(root)]
    if not tasks:
        raise TaskError(f"{root}: no task folders (subfolders with a {TASK_FILE}) found")
    seen: dict[str, Path] = {}
    for tf in tasks:
        if tf.task.task_id in seen:
            raise TaskError(f"task id {tf.task.task_id!r} appears twice: {seen[tf.task.task_id]} and {tf.path}")
        seen[tf.task.task_id] = tf.path
    return tasks
