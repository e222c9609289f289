"""A test run never outlives its call: over stdio, a client that cancels `run_tests` or disconnects during it gets
the suite killed, and the server leaves at once; SIGTERM ends the session like a disconnect (its trajectory is
closed), not like a crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skills_store.trajectories.store import SQLiteTrajectoryStore

SLOW_TEST = "import pathlib, time\n\ndef test_slow():\n    pathlib.Path('started').write_text('')\n    time.sleep(60)\n"


class Server:
    """`skillbank serve` over stdio, spoken to line by line (the SDK client would hide the timing)."""

    def __init__(self, tmp_path: Path) -> None:
        self.ws = tmp_path / "ws"
        self.ws.mkdir()
        (self.ws / "test_slow.py").write_text(SLOW_TEST)
        self.home = tmp_path / "home"
        env = {
            **os.environ,
            "SKILLBANK_HOME": str(self.home),
            "SKILLBANK_EMBEDDER": "hash",
            "SKILLBANK_TEST_PYTHON": sys.executable,
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_server", "serve", "--workspace", str(self.ws)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        self.send({"id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cancel-test", "version": "1"},
        }})  # fmt: skip
        self.reply()
        self.send({"method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        return json.loads(self.proc.stdout.readline())

    def start_slow_run(self) -> None:
        self.send({"id": 1, "method": "tools/call", "params": {"name": "run_tests", "arguments": {"timeout_s": 120}}})
        deadline = time.monotonic() + 60
        while not (self.ws / "started").exists():
            assert time.monotonic() < deadline, "the test run did not start"
            time.sleep(0.02)

    def suite_processes(self) -> list[int]:
        """Processes working in the workspace: the run (under bubblewrap too: it binds the workspace in place)."""
        found = []
        for entry in Path("/proc").iterdir():
            try:
                running = entry.name.isdigit() and os.readlink(entry / "cwd") == str(self.ws)
                if running and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def wait_gone(self, seconds: float) -> list[int]:
        deadline = time.monotonic() + seconds
        while (left := self.suite_processes()) and time.monotonic() < deadline:
            time.sleep(0.02)
        return left

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()


@pytest.fixture
def server(tmp_path: Path):
    running = Server(tmp_path)
    try:
        yield running
    finally:
        running.close()


def _trajectories(home: Path) -> list[Any]:
    with SQLiteTrajectoryStore(home / "trajectories.db") as store:
        return [store.get(t.trajectory_id) for t in store.list()]


def test_a_client_that_disconnects_during_a_run_gets_the_suite_killed_and_the_server_leaves_at_once(
    server: Server,
) -> None:
    server.start_slow_run()
    assert server.suite_processes()
    assert server.proc.stdin is not None
    start = time.monotonic()
    server.proc.stdin.close()
    server.proc.wait(30)
    took = time.monotonic() - start
    assert took < 1.0  # the suite sleeps 60 s; before, the server waited for it (up to timeout_s)
    assert server.proc.returncode == 0
    assert server.wait_gone(5) == []
    (trajectory,) = _trajectories(server.home)
    assert trajectory.status == "closed"
    [step] = [s for s in trajectory.steps if s.kind == "tool_call"]
    assert (step.tool, step.ok) == ("run_tests", False)
    assert "cancelled: the client cancelled the call or went away" in step.content
    assert "Task" not in step.content  # not the cancel scope's text, which names the server's tasks and files


def test_a_cancelled_run_is_killed_and_the_server_goes_on_answering(server: Server) -> None:
    server.start_slow_run()
    server.send({"method": "notifications/cancelled", "params": {"requestId": 1, "reason": "the user pressed Esc"}})
    assert server.wait_gone(5) == []
    server.send({"id": 2, "method": "tools/call", "params": {"name": "record_trajectory", "arguments": {"steps": []}}})
    answer = server.reply()
    assert answer["id"] == 2
    assert not answer["result"].get("isError")


def test_sigterm_ends_the_session_like_a_disconnect_and_closes_its_trajectory(server: Server) -> None:
    server.send({"id": 1, "method": "tools/call", "params": {"name": "record_trajectory", "arguments": {
        "steps": [{"kind": "thought", "content": "kept"}], "outcome": "success",
    }}})  # fmt: skip
    assert not server.reply()["result"].get("isError")
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(30)
    assert server.proc.returncode == 0
    (trajectory,) = _trajectories(server.home)
    assert trajectory.status == "closed"
    assert trajectory.outcome == "success"
    assert trajectory.steps[0].content == "kept"


def test_sigterm_during_a_run_kills_the_suite_too(server: Server) -> None:
    server.start_slow_run()
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(30)
    assert server.wait_gone(5) == []
    (trajectory,) = _trajectories(server.home)
    assert trajectory.status == "closed"
