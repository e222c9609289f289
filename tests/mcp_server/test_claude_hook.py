"""`skillbank hook claude`: Claude Code hook events become a trajectory; skills come back as additionalContext."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mcp_server.claude_hook import run
from mcp_server.cli.hook import app
from skills_store.models import Skill
from skills_store.trajectories.store import SQLiteTrajectoryStore

SID = "5f3c0c4e-9d7b-4d0e-8a65-2c1d7e0b9a11"


def event(name: str, **fields: Any) -> str:
    base = {"session_id": SID, "transcript_path": "/tmp/t.jsonl", "cwd": "/work/demo", "hook_event_name": name}
    return json.dumps({**base, **fields})


def call(home: Path, text: str, search=None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(text, home=home, redact_patterns=[], out=out, err=err, search=search or (lambda q, k: []))
    return code, out.getvalue(), err.getvalue()


def stored(home: Path, tid: str = f"claude-{SID}"):
    with SQLiteTrajectoryStore(home / "trajectories.db") as store:
        return store.get(tid)


def skill(n: int) -> Skill:
    return Skill(
        skill_id=f"sk-{n}", title=f"Lesson {n}", pattern=f"ImportError {n}", strategy="Pin it.", confidence=0.8
    )


def test_a_whole_session_becomes_one_closed_trajectory_with_the_outcome_of_the_last_test_run(tmp_path: Path) -> None:
    events = [
        event("SessionStart", source="startup"),
        event("UserPromptSubmit", prompt="fix the failing parser test"),
        event(
            "PostToolUse",
            tool_name="Edit",
            tool_input={"file_path": "p.py", "old_string": "a", "new_string": "b"},
            tool_response={"filePath": "p.py", "originalFile": "x" * 100_000, "userModified": False},
            tool_use_id="toolu_1",
            duration_ms=12,
        ),
        event(
            "PostToolUse", tool_name="Bash", tool_input={"command": "pytest -q"}, tool_response={"stdout": "1 passed"}
        ),
        event(
            "PostToolUseFailure",
            tool_name="Bash",
            tool_input={"command": "python -m pytest tests/"},
            error="Command exited with non-zero status code 1",
            is_interrupt=False,
        ),
        event("SessionEnd", reason="prompt_input_exit"),
    ]
    for text in events:
        assert call(tmp_path, text)[0] == 0
    traj = stored(tmp_path)
    assert (traj.source, traj.workspace, traj.repo) == ("claude-code", "/work/demo", "demo")
    assert traj.task == "fix the failing parser test"
    assert [s.kind for s in traj.steps] == ["message", "tool_call", "tool_call", "tool_call", "observation"]
    edit = traj.steps[1]
    assert (edit.tool, edit.ok, edit.duration_s) == ("Edit", True, 0.012)
    assert "originalFile" not in edit.result
    failure = traj.steps[3]
    assert failure.ok is False
    assert "non-zero status" in failure.content
    assert (traj.status, traj.outcome, traj.reward) == ("closed", "failure", 0.0)
    assert "prompt_input_exit" in traj.steps[-1].content


def test_skills_for_the_prompt_are_printed_as_additional_context_once(tmp_path: Path) -> None:
    hits = [skill(1), skill(2)]
    code, out, _ = call(tmp_path, event("UserPromptSubmit", prompt="ImportError in app"), lambda q, k: hits[:k])
    assert code == 0
    payload = json.loads(out)["hookSpecificOutput"]
    assert payload["hookEventName"] == "UserPromptSubmit"
    assert "[sk-1] Lesson 1" in payload["additionalContext"]
    assert "not instructions" in payload["additionalContext"]
    assert stored(tmp_path).skills_shown == ["sk-1", "sk-2"]
    _, again, _ = call(tmp_path, event("UserPromptSubmit", prompt="ImportError again"), lambda q, k: hits[:k])
    assert again == ""


def test_session_start_searches_by_project_name_and_branch(tmp_path: Path) -> None:
    project = tmp_path / "payments-api"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/fix/retry-timeouts\n")
    queries: list[str] = []
    code, out, _ = call(
        tmp_path,
        json.dumps({"session_id": SID, "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}),
        lambda q, k: queries.append(q) or [skill(3)],
    )
    assert code == 0
    assert queries == ["payments api fix retry timeouts"]
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_secrets_in_prompts_and_tool_calls_are_redacted(tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "Ab1" * 30
    call(tmp_path, event("UserPromptSubmit", prompt=f"use ANTHROPIC_API_KEY={key} to call it"))
    call(tmp_path, event("PostToolUse", tool_name="Bash", tool_input={"command": f"curl -H 'x-api-key: {key}'"}))
    dump = json.dumps(stored(tmp_path).model_dump(mode="json"))
    assert key not in dump
    assert "[REDACTED:" in dump


def test_skillbank_own_tools_are_left_to_the_server(tmp_path: Path) -> None:
    call(tmp_path, event("PostToolUse", tool_name="mcp__skillbank__run_tests", tool_input={}, tool_response={}))
    call(tmp_path, event("PostToolUse", tool_name="Read", tool_input={"file_path": "a"}, tool_response={"x": 1}))
    assert [s.tool for s in stored(tmp_path).steps] == ["Read"]


def test_a_session_resumed_after_it_ended_continues_in_a_new_trajectory(tmp_path: Path) -> None:
    call(tmp_path, event("UserPromptSubmit", prompt="first"))
    call(tmp_path, event("SessionEnd", reason="logout"))
    call(tmp_path, event("SessionStart", source="resume"))
    call(tmp_path, event("UserPromptSubmit", prompt="second"))
    assert stored(tmp_path).outcome == "abandoned"
    resumed = stored(tmp_path, f"claude-{SID}.2")
    assert (resumed.status, resumed.task) == ("open", "second")


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("not json", "stdin is not JSON"),
        ('{"session_id": "x"}', "no hook_event_name"),
        ('{"hook_event_name": "PostToolUse", "session_id": "../../etc"}', "not an id"),
    ],
)
def test_bad_input_exits_1_with_a_message_and_stores_nothing(tmp_path: Path, stdin: str, message: str) -> None:
    code, out, err = call(tmp_path, stdin)
    assert (code, out) == (1, "")
    assert message in err
    assert not (tmp_path / "trajectories.db").exists()


def test_events_it_does_not_handle_are_ignored(tmp_path: Path) -> None:
    assert call(tmp_path, event("Stop", stop_hook_active=False)) == (0, "", "")


def test_concurrent_hook_calls_of_one_session_lose_no_step(tmp_path: Path) -> None:
    def one(i: int) -> None:
        call(tmp_path, event("PostToolUse", tool_name="Read", tool_input={"n": i}, tool_response={}))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(s.args["n"] for s in stored(tmp_path).steps) == list(range(12))


def test_the_cli_reads_stdin_and_uses_skillbank_home(skillbank_home: Path) -> None:
    result = CliRunner().invoke(app, ["claude"], input=event("UserPromptSubmit", prompt="hello"))
    assert result.exit_code == 0, result.output
    assert stored(skillbank_home).task == "hello"
    bad = CliRunner().invoke(app, ["claude"], input="{")
    assert bad.exit_code == 1


def test_injection_reads_the_real_skill_catalog(hash_bank, tmp_path: Path) -> None:
    hash_bank.upsert(
        [
            Skill(
                skill_id="sk-circular",
                title="Break a circular import",
                pattern="ImportError: cannot import name 'X' from partially initialized module",
                strategy="Move the shared names into a third module, or import inside the function.",
                confidence=0.9,
            )
        ]
    )
    hash_bank.flush()
    home = tmp_path / "bank"
    prompt = "ImportError: cannot import name 'Config' from partially initialized module 'app'"
    out, err = io.StringIO(), io.StringIO()
    # Threshold 0: this test is about reading the catalog; a one-skill bank gives BM25 nothing to weigh.
    code = run(event("UserPromptSubmit", prompt=prompt), home=home, redact_patterns=[], out=out, err=err, threshold=0)
    assert code == 0
    assert (
        "[sk-circular] Break a circular import" in json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    )


def test_a_session_that_ends_before_anything_happened_leaves_no_trajectory(tmp_path: Path) -> None:
    assert call(tmp_path, event("SessionEnd", reason="other"))[0] == 0
    with SQLiteTrajectoryStore(tmp_path / "trajectories.db") as store:
        assert store.list() == []


@pytest.mark.parametrize(
    ("variable", "value"),
    [("SKILLBANK_EMBEDDER", "minilm2"), ("SKILLBANK_SANDBOX", "dockr"), ("SKILLBANK_REWARD_WEIGHTS", "{")],
)
def test_a_bad_setting_the_hook_does_not_use_does_not_stop_it(
    skillbank_home: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    result = CliRunner().invoke(app, ["claude"], input=event("UserPromptSubmit", prompt="hello"))
    assert result.exit_code == 0, result.output
    assert stored(skillbank_home).task == "hello"


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("SKILLBANK_SUGGEST_THRESHOLD", "high", "SKILLBANK_SUGGEST_THRESHOLD: Input should be a valid number"),
        ("SKILLBANK_REDACT_PATTERNS", "ACME-[0-9]+", "SKILLBANK_REDACT_PATTERNS is not JSON"),
    ],
)
def test_a_bad_setting_the_hook_uses_exits_1_never_2_which_would_block_claude(
    skillbank_home: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, message: str
) -> None:
    monkeypatch.setenv(variable, value)
    result = CliRunner().invoke(app, ["claude"], input=event("UserPromptSubmit", prompt="hello"))
    assert result.exit_code == 1  # Claude Code treats a hook's exit 2 as blocking: the prompt would be erased
    assert f"skillbank hook claude: invalid settings: {message}" in result.output
    assert not (skillbank_home / "trajectories.db").exists()


@pytest.mark.parametrize(
    ("stdin", "expected"),
    [
        (event("UserPromptSubmit", prompt="cut \ud83d here"), "cut \ufffd here"),
        (event("UserPromptSubmit", prompt="pair \U0001f600 kept").encode(), "pair \U0001f600 kept"),
        (
            event("UserPromptSubmit", prompt="PLACEHOLDER").encode().replace(b"PLACEHOLDER", b"\xff\xfe ok"),
            "\ufffd\ufffd ok",
        ),
    ],
)
def test_text_that_is_not_valid_unicode_is_stored_with_replacement_characters(
    tmp_path: Path, stdin: str | bytes, expected: str
) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run(stdin, home=tmp_path, redact_patterns=[], out=out, err=err, search=lambda q, k: []) == 0, err.getvalue()
    assert stored(tmp_path).steps[0].content == expected


def test_a_lone_surrogate_in_a_tool_response_is_stored_not_lost(tmp_path: Path) -> None:
    text = event("PostToolUse", tool_name="Bash", tool_input={"command": "cat log"}, tool_response={"stdout": "x"})
    text = text.replace('"stdout": "x"', '"stdout": "out \\ud83d", "\\udc00key": 1')
    assert call(tmp_path, text)[0] == 0
    assert stored(tmp_path).steps[0].result == {"stdout": "out \ufffd", "\ufffdkey": 1}


def test_the_cli_stores_a_prompt_whose_bytes_are_not_utf8(skillbank_home: Path) -> None:
    stdin = event("UserPromptSubmit", prompt="PLACEHOLDER").encode().replace(b"PLACEHOLDER", b"bad \xff")
    result = CliRunner().invoke(app, ["claude"], input=stdin)
    assert result.exit_code == 0, result.output
    assert stored(skillbank_home).task == "bad \ufffd"


def test_a_step_the_store_refuses_leaves_no_empty_trajectory(tmp_path: Path) -> None:
    huge = event("PostToolUse", tool_name="Bash", tool_input={f"k{i}": "v" * 3_000 for i in range(2_000)})
    code, _, err = call(tmp_path, huge)
    assert code == 1
    assert "limit" in err
    with SQLiteTrajectoryStore(tmp_path / "trajectories.db") as store:
        assert store.list() == []


def test_installing_or_reading_about_a_test_runner_does_not_overwrite_the_last_test_runs_reward(
    tmp_path: Path,
) -> None:
    """`pip install pytest-xdist` after a failing run matched the old `\\bpytest\\b` and set the reward to 1.0: the
    session closed as a success with its tests failing."""
    events = [
        event("SessionStart", source="startup"),
        event(
            "PostToolUseFailure",
            tool_name="Bash",
            tool_input={"command": "pytest -q"},
            error="Command exited with non-zero status code 1",
        ),
        event("PostToolUse", tool_name="Bash", tool_input={"command": "pip install pytest-xdist"}),
        event("PostToolUse", tool_name="Bash", tool_input={"command": "cat pytest.ini"}),
        event("SessionEnd", reason="prompt_input_exit"),
    ]
    for text in events:
        assert call(tmp_path, text)[0] == 0
    traj = stored(tmp_path)
    assert (traj.status, traj.outcome, traj.reward) == ("closed", "failure", 0.0)


@pytest.mark.parametrize("duration", ["1e309", "-1", "true", '"12"', "NaN"])
def test_a_tool_event_with_a_duration_that_is_no_number_of_ms_keeps_its_step_without_one(
    tmp_path: Path, duration: str
) -> None:
    text = event("PostToolUse", tool_name="Edit", tool_input={"file_path": "p.py"}, tool_response={}, duration_ms=0)
    assert call(tmp_path, text.replace('"duration_ms": 0', f'"duration_ms": {duration}'))[0] == 0
    [step] = stored(tmp_path).steps
    assert (step.tool, step.duration_s) == ("Edit", None)
