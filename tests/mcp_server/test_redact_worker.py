"""The redaction worker: the same answers as in-process redaction, and in-process redaction whenever it cannot
answer (not ready, busy, dead, hung, too big); it never outlives its server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from mcp_server.capture_text import CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS, CapturedArgs, redact_bounded, windows_of
from mcp_server.redact_worker import PIPE_BYTES, RedactWorker
from skills_store.redact import Redactor
from skills_store.redact_rules import RULES

KEY = "sk-ant-api03-" + "Zq7Lm2Xw9Rt4Yp1Vb8Nc3Kd6"
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA7x9\n" * 40 + "-----END RSA PRIVATE KEY-----"


def long_args(n: int = 60_000) -> dict:
    body = "".join(f"+line {i} of the diff\n" for i in range(n // 20))
    patch = f"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n+API_KEY={KEY}\n{body}{PEM}\n+password=hunter2hunter2\n"
    return {"patch": patch, "dry_run": False, "notes": ["token: " + KEY, {"password": "s3cr3t-value!"}]}


@pytest.fixture
def worker():
    made: list[RedactWorker] = []

    def make(redactor: Redactor | None = None, **kwargs) -> RedactWorker:
        w = RedactWorker(redactor or Redactor(), **kwargs)
        made.append(w)
        assert w.wait_ready(20)
        return w

    yield make
    for w in made:
        w.close()


def test_the_worker_stores_exactly_what_in_process_redaction_stores(worker) -> None:
    red = Redactor([r"(?P<secret>hunter\d+)"])
    w = worker(red)
    for n in (9_000, 60_000, 400_000):
        args = long_args(n)
        captured = CapturedArgs(red, w, args)
        assert captured.pending is not None
        stored = captured.stored(10.0)
        assert stored == redact_bounded(red, dict(args), CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS)
        assert KEY not in str(stored)
        assert "hunter2" not in str(stored)
    assert w.answered == 3


def test_short_arguments_and_a_worker_not_yet_ready_are_redacted_in_process() -> None:
    red = Redactor()
    w = RedactWorker(red)
    try:
        assert CapturedArgs(red, w, {"patch": "+x\n" * 10}).pending is None  # too little text to be worth it
        first = CapturedArgs(red, w, long_args())
        assert first.pending is None  # the first long call spawns the worker and does not wait for it
        assert first.stored(10.0) == redact_bounded(red, long_args(), CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS)
        assert w.wait_ready(20)
        assert CapturedArgs(red, w, long_args()).pending is not None
    finally:
        w.close()


def test_a_second_call_while_the_worker_is_busy_is_redacted_in_process(worker) -> None:
    red = Redactor()
    w = worker(red)
    os.kill(w.pid, signal.SIGSTOP)  # the first request cannot be answered
    try:
        busy = CapturedArgs(red, w, long_args())
        assert busy.pending is not None
        second = CapturedArgs(red, w, long_args())
        assert second.pending is None
        assert KEY not in str(second.stored(0.0))
    finally:
        os.kill(w.pid, signal.SIGCONT)
    assert busy.stored(10.0) == redact_bounded(red, long_args(), CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS)


def test_a_killed_worker_is_redacted_around_and_replaced(worker) -> None:
    red = Redactor()
    w = worker(red)
    old = w.pid
    os.kill(w.pid, signal.SIGSTOP)
    captured = CapturedArgs(red, w, long_args())
    os.kill(old, signal.SIGKILL)
    start = time.monotonic()
    stored = captured.stored(10.0)
    assert time.monotonic() - start < 5.0  # the end of its pipe is seen, not the timeout waited out
    assert stored == redact_bounded(red, long_args(), CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS)
    assert w.wait_ready(20)
    assert w.pid not in (None, old)
    assert CapturedArgs(red, w, long_args()).stored(10.0) == stored


def test_a_hung_worker_costs_one_timeout_then_is_replaced(worker) -> None:
    red = Redactor()
    w = worker(red)
    hung = w.pid
    os.kill(hung, signal.SIGSTOP)
    captured = CapturedArgs(red, w, long_args())
    assert KEY not in str(captured.stored(0.3))
    assert w.pid is None  # given up on and killed
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(hung, 0)
    assert w.wait_ready(20)
    assert w.pid != hung


def test_a_worker_hung_on_a_request_nobody_waited_for_is_replaced_by_a_later_call(worker, monkeypatch) -> None:
    """A step committed from the event loop only looks for the answer (`stored(0.0)`), so it never gives up on a
    hung worker; a later call does, once the request has waited `ANSWER_TIMEOUT_S`."""
    import mcp_server.redact_worker as redact_worker

    monkeypatch.setattr(redact_worker, "ANSWER_TIMEOUT_S", 0.2)
    red = Redactor()
    w = worker(red)
    hung = w.pid
    os.kill(hung, signal.SIGSTOP)
    looked = CapturedArgs(red, w, long_args())
    assert looked.pending is not None
    assert KEY not in str(looked.stored(0.0))  # redacted in-process, the worker left alone
    assert w.pid == hung
    assert CapturedArgs(red, w, long_args()).pending is None  # busy, but not for long yet: kept
    assert w.pid == hung
    time.sleep(0.3)
    assert CapturedArgs(red, w, long_args()).pending is None  # waited too long: killed, this call in-process
    with pytest.raises(ProcessLookupError):
        os.kill(hung, 0)
    assert w.wait_ready(20)
    assert w.pid not in (None, hung)
    assert CapturedArgs(red, w, long_args()).pending is not None


def test_values_too_big_for_the_pipe_or_not_plain_data_stay_in_process(worker) -> None:
    w = worker()
    assert w.submit({"patch": "x" * PIPE_BYTES}, PIPE_BYTES) is None
    assert w.submit({"when": object()}, 10**6) is None
    assert windows_of({"patch": "x" * 10**7}, CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS)["patch"].count("x") < 40_000


def test_a_redactor_with_custom_rules_gets_no_worker() -> None:
    red = Redactor(rules=RULES[:3])
    assert red.spec is None
    with pytest.raises(ValueError, match="custom rules"):
        RedactWorker(red)
    captured = CapturedArgs(red, None, long_args())
    assert captured.stored(1.0) == redact_bounded(red, long_args(), CAPTURE_TEXT_CHARS, REDACT_MARGIN_CHARS)


def test_the_worker_leaves_with_its_server_even_one_that_exits_without_cleanup() -> None:
    script = textwrap.dedent(
        """
        import os, sys
        sys.path.insert(0, sys.argv[1])
        from mcp_server.redact_worker import RedactWorker
        from skills_store.redact import Redactor
        w = RedactWorker(Redactor())
        assert w.wait_ready(20)
        print(w.pid, flush=True)
        os._exit(0)
        """
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", script, root], capture_output=True, text=True, timeout=60)
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with open(f"/proc/{pid}/stat") as f:  # reaped by init once it exits; a zombie counts as gone
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return
        time.sleep(0.02)
    pytest.fail(f"the redaction worker {pid} outlived its server")


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux scheduling policies")
def test_the_worker_runs_as_a_batch_task_so_its_wake_ups_leave_the_server_its_core(worker) -> None:
    w = worker()
    assert os.sched_getscheduler(w.pid) == os.SCHED_BATCH


def test_a_request_larger_than_the_pipe_holds_is_redacted_in_process(worker, monkeypatch) -> None:
    """Written into a pipe too small for it, a request would wait on the event loop for the worker to read."""
    w = worker()
    monkeypatch.setattr(w, "_capacity", 4096)
    assert CapturedArgs(Redactor(), w, long_args()).pending is None
    monkeypatch.undo()
    assert CapturedArgs(Redactor(), w, long_args()).pending is not None  # the real pipe holds it
