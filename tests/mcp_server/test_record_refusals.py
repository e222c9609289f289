"""`record_trajectory` stores nothing it should not: a secret in a step's `tool` or in a key of its `args` /
`result` is redacted, and a step the store refuses leaves nothing behind, not even an empty trajectory.

Secrets are assembled at run time so that no credential-shaped literal sits in the repository.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import mcp
import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the suite runs with --import-mode=importlib
from test_capture_support import make_capture, make_server

pytestmark = pytest.mark.anyio

OPENAI = "sk-" + "proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"
GITHUB = "gh" + "p_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"
AWS = "AKIA" + "IOSFODNN7EXAMPLQ"
#: Larger than the store's 2 MB step limit once encoded.
HUGE = {"kind": "action", "content": "c" * 900_000, "args": {"a": "b" * 700_000, "c": "d" * 700_000}}


@pytest.fixture
def env(tmp_path: Path):
    store, capture = make_capture(tmp_path)
    yield tmp_path, store, make_server(tmp_path, store, capture)
    store.close()


def database_text(home: Path) -> str:
    conn = sqlite3.connect(home / "trajectories.db")
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


async def test_secrets_in_a_steps_tool_and_in_keys_of_its_args_and_result_are_redacted(env) -> None:
    home, store, server = env
    async with mcp.Client(server) as client:
        result = await client.call_tool(
            "record_trajectory",
            {
                "steps": [
                    {"kind": "tool_call", "tool": f"curl -H 'x-api-key: {OPENAI}'", "content": "called"},
                    {"kind": "action", "content": "y", "args": {GITHUB: "value", "path": "src/app.py"}},
                    {"kind": "observation", "content": "z", "result": {"nested": {AWS: 1, "exit_code": 0}}},
                ]
            },
        )
        assert not result.is_error, result.content[0].text
        steps = store.get(result.structured_content["trajectory_id"]).steps
    text = database_text(home)
    for secret in (OPENAI, GITHUB, AWS):
        assert secret not in text
    assert steps[0].tool is not None
    assert steps[0].tool.startswith("curl -H 'x-api-key: [REDACTED:")
    assert steps[1].args == {"[REDACTED:github-token]": "value", "path": "src/app.py"}
    assert steps[2].result == {"nested": {"[REDACTED:aws-access-key]": 1, "exit_code": 0}}


async def test_plain_tool_names_and_keys_are_stored_as_they_were_sent(env) -> None:
    _, store, server = env
    args = {"file": "p.py", "dry_run": True, "Content-Type": "text/plain", "nested": {"line_no": 3}}
    async with mcp.Client(server) as client:
        result = await client.call_tool(
            "record_trajectory", {"steps": [{"kind": "action", "tool": "editor.apply", "content": "e", "args": args}]}
        )
    step = store.get(result.structured_content["trajectory_id"]).steps[0]
    assert (step.tool, step.args) == ("editor.apply", args)


async def test_a_step_over_the_size_limit_in_a_sessions_first_call_creates_nothing(env) -> None:
    _, store, server = env
    async with mcp.Client(server) as client:
        result = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "ok"}, HUGE]})
        assert result.is_error
        assert "over the 2,000,000-byte limit" in result.content[0].text
        assert store.list() == []
        later = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "ok"}]})
    assert not later.is_error
    assert [t.trajectory_id for t in store.list()] == [later.structured_content["trajectory_id"]]


async def test_a_step_over_the_size_limit_later_in_a_session_leaves_its_trajectory_as_it_was(env) -> None:
    _, store, server = env
    async with mcp.Client(server) as client:
        first = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "one"}]})
        refused = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "two"}, HUGE]})
        tid = first.structured_content["trajectory_id"]
        assert refused.is_error
        assert [t.trajectory_id for t in store.list()] == [tid]
        assert [s.content for s in store.get(tid).steps] == ["one"]


@pytest.mark.parametrize(("field", "levels"), [("args", 101), ("result", 200)])
async def test_a_step_nested_too_deeply_is_refused_naming_it_and_nothing_is_stored(
    env, field: str, levels: int
) -> None:
    """Stateless HTTP reads bodies ~1,000 levels deep: such a step failed in the store (or the redaction's
    recursion) as an internal error."""
    _, store, server = env
    deep: object = 1
    for _ in range(levels - 1):
        deep = [deep]
    value = {"x": deep} if field == "args" else [deep]
    async with mcp.Client(server) as client:
        ok = await client.call_tool("record_trajectory", {"steps": [{"kind": "action", "content": "a"}]})
        result = await client.call_tool(
            "record_trajectory", {"steps": [{"kind": "action", "content": "b"}, {"kind": "action", field: value}]}
        )
    assert result.is_error
    assert f"steps[1].{field} is nested more than 100 levels deep" in result.content[0].text
    assert "internal error" not in result.content[0].text
    [traj] = store.list()
    assert traj.trajectory_id == ok.structured_content["trajectory_id"]
    assert [s.content for s in store.get(traj.trajectory_id).steps] == ["a"]


async def test_a_step_nested_as_deep_as_allowed_is_stored(env) -> None:
    _, store, server = env
    deep: object = 1
    for _ in range(99):
        deep = [deep]
    async with mcp.Client(server) as client:
        result = await client.call_tool("record_trajectory", {"steps": [{"kind": "action", "args": {"x": deep}}]})
    assert not result.is_error, result.content
    [traj] = store.list()
    assert store.get(traj.trajectory_id).steps[0].args == {"x": deep}


@pytest.mark.parametrize(
    ("step", "field"),
    [
        ({"ts": 0}, "ts"),
        ({"ts": 1_700_000_000_000}, "ts"),
        ({"ts": "2024-01-01"}, "ts"),
    ],
)
async def test_a_step_time_that_would_be_converted_is_refused_and_nothing_is_stored(
    env, step: dict, field: str
) -> None:
    _, store, server = env
    async with mcp.Client(server) as client:
        result = await client.call_tool("record_trajectory", {"steps": [{"kind": "thought", "content": "x", **step}]})
        kept = await client.call_tool(
            "record_trajectory", {"steps": [{"kind": "thought", "content": "y", "ts": "2026-12-05T10:00:00Z"}]}
        )
    assert result.is_error is True
    assert field in result.content[0].text
    [traj] = store.list()
    assert [(s.content, s.ts.isoformat()) for s in store.get(traj.trajectory_id).steps] == [
        ("y", "2026-12-05T10:00:00+00:00")
    ]
    assert kept.structured_content["total_steps"] == 1
