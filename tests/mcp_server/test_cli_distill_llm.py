"""`skillbank distill --llm` against a local scripted Chat Completions endpoint: exit status and reported tokens.

As `agent` has it: an endpoint that cannot be reached is exit 2 naming the variable; a failing model request that
ends the pass is exit 1; the token budget ending it early is exit 0. The tokens reported are the usage the model
sent back (60 per answer here), never the estimate of a request that failed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skills_store.models import Step
from skills_store.trajectories.store import SQLiteTrajectoryStore
from tests.e2e.scripted_llm import Turn, chat_endpoint, chat_reply, serve

DRAFT = {"title": "Fix a misspelt name", "pattern": "NameError: name '<name>' is not defined", "confidence": 0.6,
         "strategy": "Rename it to the defined name.", "group": "G1", "why": "the name was misspelt"}  # fmt: skip
ANSWER: Turn = [("final_result", {"skills": [DRAFT]})]
"""A structured answer (pydantic-ai's output tool); a plain text turn is an answer without the structured output."""


def record_fixes(home: Path, n: int) -> None:
    """`n` closed trajectories that fixed a NameError (a test run, a patch, a passing run)."""
    with SQLiteTrajectoryStore(home / "trajectories.db") as store:
        for i in range(n):
            name, message = f"itms{i}", f"NameError: name 'itms{i}' is not defined\n\nshop{i}.py:2: NameError"
            patch = (f"--- a/shop{i}.py\n+++ b/shop{i}.py\n@@ -1,2 +1,2 @@\n def total(items):\n-    return {name}\n"
                     "+    return items\n")  # fmt: skip
            tid = store.create(task=f"fix total {i}").trajectory_id
            store.append(
                tid,
                [
                    Step(kind="tool_call", tool="run_tests", ok=False, args={"tests": None}, result={
                         "status": "failed", "failing": ["t::a"], "failures": [{"id": "t::a", "message": message}]}),
                    Step(kind="tool_call", tool="apply_patch", ok=True, args={"patch": patch, "dry_run": False},
                         result={"applied": True, "files": [f"modify shop{i}.py"], "fuzzy": False}),
                    Step(kind="tool_call", tool="run_tests", ok=True, args={"tests": None},
                         result={"status": "passed"}),
                ],
            )  # fmt: skip
            store.close_trajectory(tid, "success")


@pytest.fixture
def home(skillbank_home: Path) -> Path:
    record_fixes(skillbank_home, 1)
    return skillbank_home


def distill(home: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLBANK_", "OPENAI_", "ANTHROPIC_"))}
    env |= {"SKILLBANK_HOME": str(home), "SKILLBANK_EMBEDDER": "hash", "SKILLBANK_STARTER_SKILLS": "false",
            "OPENAI_BASE_URL": base_url}  # fmt: skip
    command = [sys.executable, "-m", "mcp_server", "distill", "--llm", "openai:q", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def pending(home: Path) -> int:
    with SQLiteTrajectoryStore(home / "trajectories.db") as store:
        return len(store.pending_for("llm", limit=100))


def test_an_unreachable_endpoint_is_one_line_naming_the_variable_and_reports_no_tokens(home: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = distill(home, f"http://127.0.0.1:{port}/v1")
    assert out.returncode == 2, out.stdout + out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("skillbank: error: could not reach the model 'openai:q'")
    assert "check OPENAI_BASE_URL" in last
    assert "Traceback" not in out.stderr
    assert "stopped early: model request failed" in out.stdout
    assert "model tokens" not in out.stdout
    assert pending(home) == 1


def test_answers_without_the_structured_output_fail_the_run_and_count_only_the_reported_usage(home: Path) -> None:
    with chat_endpoint(["I found nothing to say."]) as llm:
        out = distill(home, f"{llm.url}/v1")
    assert out.returncode == 1, out.stdout + out.stderr
    assert len(llm.requests) == 1
    assert "; 60 model tokens;" in out.stdout
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("skillbank: error: a request to the model 'openai:q' failed and ended the pass")
    assert "Traceback" not in out.stderr
    assert pending(home) == 1


def test_a_request_failing_after_answers_ends_the_pass_as_a_failure_keeping_what_was_distilled(
    skillbank_home: Path,
) -> None:
    record_fixes(skillbank_home, 2)
    sent: list[int] = []

    def pick(body: dict[str, Any]) -> int:  # the first request is answered, the second is not
        sent.append(1)
        return len(sent) - 1

    with serve([ANSWER, "no structured output"], {"/chat/completions": (pick, chat_reply)}) as llm:
        out = distill(skillbank_home, f"{llm.url}/v1", "--batch", "1")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "llm: 1 trajectories distilled into 1 draft(s)" in out.stdout
    assert "; 120 model tokens;" in out.stdout
    assert pending(skillbank_home) == 1


def test_a_pass_that_succeeds_or_that_the_budget_ends_exits_0(home: Path) -> None:
    with chat_endpoint([ANSWER]) as llm:
        over = distill(home, f"{llm.url}/v1", "--budget", "100")
        assert over.returncode == 0, over.stdout + over.stderr
        assert "stopped early: token budget" in over.stdout
        assert "model tokens" not in over.stdout
        assert llm.requests == []
        done = distill(home, f"{llm.url}/v1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "llm: 1 trajectories distilled into 1 draft(s): 1 new skill(s)" in done.stdout
    assert "; 60 model tokens" in done.stdout
    assert pending(home) == 0
