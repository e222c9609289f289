"""The syntax worker: apply_patch's check in a second process gives the in-process check's errors, whatever the
worker does (answers, dies, hangs), and never outlives the process that started it."""

from __future__ import annotations

import difflib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandbox import syntax_worker, syntax_worker_main
from sandbox.errors import PatchError
from sandbox.patch import apply_patch
from sandbox.syntax import file_syntax_error, syntax_error
from sandbox.syntax_worker import SyntaxWorker
from tests.sandbox.test_syntax_codegen import CODEGEN_ONLY, _inject


def until(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    """Wait for something another process does (polling, with a deadline: no fixed sleep)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def worker() -> Iterator[SyntaxWorker]:
    made = SyntaxWorker()
    yield made
    made.close()


def ready(worker: SyntaxWorker) -> int:
    """Start the worker and wait until it takes batches; its pid."""
    assert worker.wait_ready(20)
    pid = worker.pid
    assert pid is not None
    return pid


def long_module(name: str, functions: int = 40) -> str:
    body = "".join(f"def {name}_{i}(x):\n    y = x + {i}\n    return y\n\n\n" for i in range(functions))
    return f'"""{name}."""\n\n\nclass Holder:\n    value = 1\n\n\n{body}'


OLD = {
    "pkg/big.py": long_module("big"),
    "pkg/other.py": long_module("other"),
    "pkg/crlf.py": long_module("crlf").replace("\n", "\r\n"),
    "pkg/bom.py": "\ufeff" + long_module("bom"),
    "pkg/short.py": "A = 1\n",
    "notes.txt": "plain\n",
}


def edited(files: dict[str, str], broken: bool) -> dict[str, str]:
    """Changes in several blocks of every file; with `broken`, syntax errors in some of them, and a new file."""
    new = dict(files)
    new["pkg/big.py"] = (
        files["pkg/big.py"]
        .replace("y = x + 7\n", "y = x + 70\n")
        .replace("return y\n\n\ndef big_30", ("return y)\n\n\ndef big_30" if broken else "return -y\n\n\ndef big_30"))
    )
    new["pkg/other.py"] = files["pkg/other.py"].replace("y = x + 3\n", "y = x + 33\n" if not broken else "y = x +* 3\n")
    new["pkg/crlf.py"] = files["pkg/crlf.py"].replace("y = x + 5\r\n", "y = x +\r\n" if broken else "y = 5\r\n")
    new["pkg/bom.py"] = files["pkg/bom.py"].replace("y = x + 9\n", "y = [x\n" if broken else "y = [x]\n")
    new["pkg/short.py"] = "A = (1\n" if broken else "A = 2\n"
    new["pkg/added.py"] = "def f(:\n    pass\n" if broken else "def f():\n    pass\n"
    new["notes.txt"] = "plain text\n"
    return new


def unified(old: dict[str, str], new: dict[str, str]) -> str:
    out: list[str] = []
    for path in sorted(new):
        before = old.get(path, "").splitlines(keepends=True)
        source = f"a/{path}" if path in old else "/dev/null"
        out += difflib.unified_diff(before, new[path].splitlines(keepends=True), source, f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def tree(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(text.encode("utf-8"))
    return root


def both(tmp_path: Path, patch: str, worker: SyntaxWorker, files: dict[str, str] = OLD) -> tuple[dict, dict]:
    """The result of the patch checked in-process and with the worker, each on its own copy of `files`."""
    plain = apply_patch(tree(tmp_path / "plain", files), patch).model_dump()
    helped = apply_patch(tree(tmp_path / "helped", files), patch, syntax_worker=worker).model_dump()
    for path in (tmp_path / "plain").rglob("*.py"):
        assert path.read_bytes() == (tmp_path / "helped" / path.relative_to(tmp_path / "plain")).read_bytes()
    shutil.rmtree(tmp_path / "plain")
    shutil.rmtree(tmp_path / "helped")
    return plain, helped


@pytest.mark.parametrize("broken", [False, True])
def test_the_worker_reports_the_errors_the_in_process_check_reports(
    tmp_path: Path, worker: SyntaxWorker, broken: bool
) -> None:
    ready(worker)
    plain, helped = both(tmp_path, unified(OLD, edited(OLD, broken)), worker)
    assert helped == plain
    assert len(plain["syntax_errors"]) == (6 if broken else 0)


def waiting_tickets(batch: syntax_worker.Batch) -> int:
    """Tickets no reader has taken yet."""
    size = fcntl.ioctl(batch._fds["tickets_r"], termios.FIONREAD, b"\0\0\0\0")
    return int.from_bytes(size, sys.byteorder) // syntax_worker_main.TICKET.size


PY = "--- a/x.py\n"  # what `batch` looks for


def jobs() -> list[tuple[bytes, list[str], list[tuple[int, int]] | None, str]]:
    """The jobs of the broken edit: bytes, lines, changed ranges (the whole file for some), file name."""
    new = edited(OLD, broken=True)
    out = []
    for path, text in new.items():
        if path.endswith(".py"):
            source = text.encode()
            lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")[:-1]
            out.append((source, lines, None if path.endswith(("short.py", "added.py")) else [(0, len(lines))], path))
    return out


def test_jobs_the_worker_took_come_back_from_it_and_equal_the_in_process_errors(worker: SyntaxWorker) -> None:
    ready(worker)
    batch = worker.batch(PY)
    assert batch is not None
    for source, lines, changed, path in jobs():
        batch.submit(path, source, lines, changed)
    batch.seal()
    until(lambda: waiting_tickets(batch) == 1)  # the worker took every job; the engine's end ticket is left
    assert batch.close() == [file_syntax_error(*job) for job in jobs()]
    assert worker.answered == len(jobs())


def test_the_worker_is_spawned_once_and_reused_by_every_patch(tmp_path: Path, worker: SyntaxWorker) -> None:
    pid = ready(worker)
    for broken in (False, True, False):
        plain, helped = both(tmp_path, unified(OLD, edited(OLD, broken)), worker)
        assert helped == plain
        worker.start()
        assert worker.pid == pid


def test_the_first_patch_opens_a_batch_at_once_and_gets_the_in_process_errors(tmp_path: Path) -> None:
    fresh = SyntaxWorker()
    try:
        plain, helped = both(tmp_path, unified(OLD, edited(OLD, True)), fresh)  # spawned by this patch
        assert helped == plain
        assert fresh.pid is not None
        plain, helped = both(tmp_path, unified(OLD, edited(OLD, True)), fresh)
        assert helped == plain
    finally:
        fresh.close()


def test_a_worker_that_dies_before_it_is_up_leaves_the_patch_its_errors(tmp_path: Path) -> None:
    fresh = SyntaxWorker()
    try:
        fresh.start()
        pid = fresh.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        plain, helped = both(tmp_path, unified(OLD, edited(OLD, True)), fresh)
        assert helped == plain
        assert ready(fresh) != pid
    finally:
        fresh.close()


def test_a_patch_without_python_files_spawns_no_worker(tmp_path: Path) -> None:
    lazy = SyntaxWorker()
    result = apply_patch(tree(tmp_path, OLD), unified(OLD, {"notes.txt": "changed\n"}), syntax_worker=lazy)
    assert result.applied
    assert not result.syntax_errors
    assert lazy.pid is None


def test_a_killed_worker_is_replaced_and_the_patch_meanwhile_gets_the_in_process_errors(
    tmp_path: Path, worker: SyntaxWorker
) -> None:
    pid = ready(worker)
    os.kill(pid, signal.SIGKILL)
    until(lambda: worker.pid is None)
    plain, helped = both(tmp_path, unified(OLD, edited(OLD, True)), worker)  # while a new one starts
    assert helped == plain
    replacement = ready(worker)
    assert replacement != pid
    answered = worker.answered
    batch = worker.batch(PY)
    assert batch is not None
    for source, lines, changed, path in jobs():
        batch.submit(path, source, lines, changed)
    batch.seal()
    until(lambda: waiting_tickets(batch) == 1)
    assert batch.close() == [file_syntax_error(*job) for job in jobs()]
    assert worker.answered == answered + len(jobs())


def test_a_worker_that_dies_during_a_batch_leaves_its_jobs_to_the_engine(worker: SyntaxWorker) -> None:
    pid = ready(worker)
    batch = worker.batch(PY)
    assert batch is not None
    for source, lines, changed, path in jobs()[:3]:
        batch.submit(path, source, lines, changed)
    os.kill(pid, signal.SIGKILL)
    for source, lines, changed, path in jobs()[3:]:
        batch.submit(path, source, lines, changed)
    assert batch.close() == [file_syntax_error(*job) for job in jobs()]
    until(lambda: not alive(pid))  # SIGKILL lands asynchronously: on a loaded machine after close() returned
    assert ready(worker) != pid


def test_a_hung_worker_is_given_up_on_killed_and_its_jobs_done_in_process(
    worker: SyntaxWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(syntax_worker, "SETTLE_TIMEOUT_S", 0.2)
    pid = ready(worker)
    os.kill(pid, signal.SIGSTOP)
    batch = worker.batch(PY)
    assert batch is not None
    for source, lines, changed, path in jobs():
        batch.submit(path, source, lines, changed)
    assert batch.close() == [file_syntax_error(*job) for job in jobs()]  # the engine took every job itself
    assert worker.batch(PY) is None  # its answer never comes: given up on, this patch is checked in-process
    until(lambda: not alive(pid))
    assert ready(worker) != pid


def hang_on_a_slow_job(batch: syntax_worker.Batch, pid: int) -> bytes:
    """Give the worker a job that takes the better part of a second to compile, and stop it once it took it (it is
    compiling); the job's source."""
    slow = ("x = 1\n" * 200_000 + "y = (\n").encode()
    batch.submit("slow.py", slow, [], None)
    until(lambda: waiting_tickets(batch) == 0)
    os.kill(pid, signal.SIGSTOP)
    return slow


def test_a_worker_that_hangs_on_a_job_is_given_up_on_and_the_engine_does_the_job(
    worker: SyntaxWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(syntax_worker, "ANSWER_TIMEOUT_S", 0.2)
    pid = ready(worker)
    batch = worker.batch(PY)
    assert batch is not None
    slow = hang_on_a_slow_job(batch, pid)
    for source, lines, changed, path in jobs():
        batch.submit(path, source, lines, changed)
    errors = batch.close()
    assert errors == [syntax_error(slow, "slow.py"), *(file_syntax_error(*job) for job in jobs())]
    assert errors[0] is not None
    until(lambda: not alive(pid))
    assert ready(worker) != pid


def test_a_refused_patch_ends_its_batch_and_the_next_patch_uses_the_worker(
    tmp_path: Path, worker: SyntaxWorker
) -> None:
    ready(worker)
    refused = unified(OLD, edited(OLD, True)) + "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-absent\n+x\n"
    with pytest.raises(PatchError):
        apply_patch(tree(tmp_path / "refused", OLD), refused, syntax_worker=worker)
    plain, helped = both(tmp_path, unified(OLD, edited(OLD, True)), worker)
    assert helped == plain
    dry = apply_patch(tree(tmp_path / "dry", OLD), unified(OLD, edited(OLD, True)), dry_run=True, syntax_worker=worker)
    assert dry.model_dump()["syntax_errors"] == plain["syntax_errors"]
    assert (tmp_path / "dry" / "pkg" / "short.py").read_text() == "A = 1\n"


def test_the_worker_leaves_when_the_process_that_started_it_exits_without_cleanup(tmp_path: Path) -> None:
    script = (
        "import os\n"
        "from sandbox.syntax_worker import SyntaxWorker\n"
        "w = SyntaxWorker()\n"
        "assert w.wait_ready(20)\n"
        "print(w.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    root = str(Path(syntax_worker.__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=root)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout)
    until(lambda: not alive(pid), timeout_s=5)


def test_closing_the_worker_kills_and_reaps_it(worker: SyntaxWorker) -> None:
    pid = ready(worker)
    worker.close()
    assert not alive(pid)
    assert worker.pid is None


def test_every_error_only_the_code_generator_finds_comes_back_from_the_worker_as_a_full_compile_reports_it(
    worker: SyntaxWorker,
) -> None:
    injected = [_inject(where, code) for where, code, _ in CODEGEN_ONLY]
    ready(worker)
    batch = worker.batch(PY)
    assert batch is not None
    for lines, new, at in injected:
        batch.submit("m.py", "\n".join(lines).encode(), lines, [(at, at + len(new))])
    batch.seal()
    until(lambda: waiting_tickets(batch) == 1)
    errors = batch.close()
    assert [e[1] if e else None for e in errors] == [message for _, _, message in CODEGEN_ONLY]
    assert errors == [syntax_error("\n".join(lines).encode(), "m.py") for lines, _, _ in injected]


def test_a_patch_whose_last_section_fails_leaves_the_tree_as_it_was_with_the_worker(
    tmp_path: Path, worker: SyntaxWorker
) -> None:
    ready(worker)
    root = tree(tmp_path / "ws", OLD)
    before = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    dirs = sorted(p for p in root.rglob("*") if p.is_dir())
    new_dir = "--- /dev/null\n+++ b/fresh/dir/new.py\n@@ -0,0 +1 @@\n+X = 1\n"
    failing = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-absent\n+x\n"
    with pytest.raises(PatchError, match=r"notes\.txt"):
        apply_patch(root, new_dir + unified(OLD, edited(OLD, False)) + failing, syntax_worker=worker)
    assert {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert sorted(p for p in root.rglob("*") if p.is_dir()) == dirs
    assert not [p for p in root.rglob("*") if p.name.startswith(".skillbank-patch-")]


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux scheduling policies")
def test_the_worker_runs_as_a_batch_task_so_its_wake_ups_leave_the_server_its_core(worker: SyntaxWorker) -> None:
    assert os.sched_getscheduler(ready(worker)) == os.SCHED_BATCH


def test_a_worker_given_up_on_never_has_its_closed_data_file_truncated(
    worker: SyntaxWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its descriptors are closed when it is stopped; their numbers may already belong to another open file."""
    monkeypatch.setattr(syntax_worker, "ANSWER_TIMEOUT_S", 0.2)
    monkeypatch.setattr(syntax_worker, "_KEEP_DATA_BYTES", 0)  # every batch would empty the shared file
    truncated: list[int] = []
    real = os.ftruncate
    monkeypatch.setattr(os, "ftruncate", lambda fd, size: (truncated.append(fd), real(fd, size))[1])
    pid = ready(worker)
    batch = worker.batch(PY)
    assert batch is not None
    hang_on_a_slow_job(batch, pid)
    assert batch.close()[0] is not None  # given up on: the engine compiled the job itself
    assert truncated == []
    assert ready(worker) != pid
    batch = worker.batch(PY)  # a healthy worker's batch over the size is emptied as before
    assert batch is not None
    for source, lines, changed, path in jobs():
        batch.submit(path, source, lines, changed)
    batch.close()
    assert len(truncated) == 1
