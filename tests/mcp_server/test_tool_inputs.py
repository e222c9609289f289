"""Strict tool inputs through a real in-memory client: unknown arguments and bad values are refused, in words a
model can act on, before the tool runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from mcp_server.app import create_server
from mcp_server.deps import ALL_TOOLS
from mcp_server.services import build_deps
from mcp_server.settings import Settings
from mcp_server.tool_inputs import closest

pytestmark = pytest.mark.anyio

NEW_FILE = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    # Running this suite leaves a marker: a refused run_tests must leave none.
    (root / "test_marker.py").write_text(
        "from pathlib import Path\n\n\ndef test_marks():\n    Path(__file__).with_name('ran').write_text('x')\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


@pytest.fixture
def settings(tmp_path: Path, workspace: Path) -> Settings:
    return Settings(
        home=tmp_path / "home", embedder="hash", starter_skills=False, workspace=workspace,
        test_python=sys.executable, sandbox="local",
    )  # fmt: skip


def no_internals(text: str) -> None:
    assert "Arguments" not in text
    assert "pydantic" not in text
    assert "http" not in text


async def test_an_unknown_argument_to_apply_patch_is_refused_and_nothing_is_written(
    settings: Settings, workspace: Path
) -> None:
    async with Client(create_server(build_deps(settings))) as client:
        result = await client.call_tool("apply_patch", {"patch": NEW_FILE, "dryRun": True})
    assert result.is_error
    text = result.content[0].text
    assert "unknown argument 'dryRun'" in text
    assert "did you mean 'dry_run'?" in text
    assert "nothing was done" in text
    no_internals(text)
    assert not (workspace / "new.txt").exists()


async def test_unknown_run_tests_arguments_name_the_closest_ones_and_nothing_runs(
    settings: Settings, workspace: Path
) -> None:
    deps = build_deps(settings)
    async with Client(create_server(deps)) as client:
        result = await client.call_tool("run_tests", {"test": ["test_marker.py"], "timeout": 5})
    assert result.is_error
    text = result.content[0].text
    assert "unknown argument 'test': did you mean 'tests'?" in text
    assert "unknown argument 'timeout': did you mean 'timeout_s'?" in text
    assert not (workspace / "ran").exists()
    assert all(deps.trajectories.step_count(t.trajectory_id) == 0 for t in deps.trajectories.list())


async def test_search_with_a_bogus_argument_fails_and_lists_the_known_ones(settings: Settings) -> None:
    async with Client(create_server(build_deps(settings))) as client:
        result = await client.call_tool("search_skills", {"query": "KeyError", "bogus": 1})
    assert result.is_error
    text = result.content[0].text
    assert "unknown argument 'bogus'" in text
    assert "query, k, language, repo, tags, min_confidence" in text
    no_internals(text)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"query": "x", "k": 500}, "argument 'k': Input should be less than or equal to 50; send an integer (>= 1"),
        ({}, "argument 'query' is required: send a string (length >= 1, length <= 8000): Error text"),
        (
            {"query": "x", "tags": "python"},
            "argument 'tags': Input should be a valid list, not a string; send a list of strings",
        ),
    ],
)
async def test_bad_values_say_which_argument_what_was_wrong_and_what_to_send(
    settings: Settings, args: dict, expected: str
) -> None:
    async with Client(create_server(build_deps(settings))) as client:
        result = await client.call_tool("search_skills", args)
    assert result.is_error
    assert expected in result.content[0].text
    no_internals(result.content[0].text)


async def test_a_hundred_thousand_steps_get_the_batching_advice(settings: Settings) -> None:
    deps = build_deps(settings)
    steps = [{"kind": "thought", "content": "x"}] * 100_000
    async with Client(create_server(deps)) as client:
        result = await client.call_tool("record_trajectory", {"steps": steps})
    assert result.is_error
    text = result.content[0].text
    assert "argument 'steps'" in text
    assert "split them into batches" in text
    assert "trajectory_id the first call returned" in text
    assert all(deps.trajectories.step_count(t.trajectory_id) == 0 for t in deps.trajectories.list())


async def test_an_unknown_field_inside_a_step_names_the_step_and_the_closest_field(settings: Settings) -> None:
    async with Client(create_server(build_deps(settings))) as client:
        result = await client.call_tool(
            "record_trajectory", {"steps": [{"kind": "thought"}, {"kind": "action", "tool_name": "x"}]}
        )
    assert result.is_error
    assert "unknown field 'tool_name' in steps[1]: did you mean 'tool'?" in result.content[0].text


async def test_an_unknown_tool_is_refused_with_the_closest_tool_name(settings: Settings) -> None:
    async with Client(create_server(build_deps(settings, tools=["search_skills"]))) as client:
        result = await client.call_tool("search_skill", {"query": "x"})
        hidden = await client.call_tool("apply_patch", {"patch": NEW_FILE})
    assert result.is_error
    assert "unknown tool 'search_skill': did you mean 'search_skills'?" in result.content[0].text
    assert hidden.is_error
    assert hidden.content[0].text == (
        "apply_patch is turned off on this server (it runs or writes the workspace's code, which over HTTP is off "
        "unless the operator starts the server with --allow-exec; or the operator left it out with --tools): this "
        "server has search_skills"
    )


async def test_the_instructions_name_only_the_tools_the_server_serves(settings: Settings) -> None:
    async with Client(create_server(build_deps(settings, tools=["search_skills", "record_trajectory"]))) as client:
        text = client.instructions or ""
    assert "search_skills" in text
    assert "record_trajectory" in text
    assert "run_tests" not in text
    assert "apply_patch" not in text


async def test_every_listed_schema_forbids_unknown_arguments(settings: Settings) -> None:
    async with Client(create_server(build_deps(settings))) as client:
        tools = (await client.list_tools()).tools
    assert sorted(t.name for t in tools) == sorted(ALL_TOOLS)
    assert all(t.input_schema.get("additionalProperties") is False for t in tools)


def test_the_closest_name_handles_camel_case_prefixes_and_typos() -> None:
    known = ["patch", "dry_run", "timeout_s", "tests"]
    assert closest("dryRun", known) == "dry_run"
    assert closest("timeout", known) == "timeout_s"
    assert closest("pach", known) == "patch"
    assert closest("zzz", known) is None


def test_a_call_without_a_tool_name_or_with_one_that_is_not_a_string_is_named_as_such() -> None:
    from mcp_server.tool_inputs import unknown_tool_text

    assert unknown_tool_text(None, ["search_skills"]) == (
        "the call names no tool (its `name` is missing or null): this server has search_skills"
    )
    assert unknown_tool_text(5, ["search_skills"]) == "unknown tool 5 (not a string): this server has search_skills"


def test_a_number_too_large_for_a_float_is_called_that_not_a_fraction() -> None:
    """`1e400` on the wire is read as infinity (the in-memory client would send it as null)."""
    from mcp_server.tool_inputs import _json_kind

    assert _json_kind(float("inf")) == "a number too large to hold"
    assert _json_kind(float("nan")) == "not a number"
    assert _json_kind(2.5) == "a number with a fraction"


async def test_every_tool_has_a_title(settings: Settings) -> None:
    async with Client(create_server(build_deps(settings))) as client:
        tools = (await client.list_tools()).tools
    assert {t.name: t.annotations.title for t in tools if t.annotations} == {
        "apply_patch": "Apply patch",
        "run_tests": "Run tests",
        "search_skills": "Search skills",
        "record_trajectory": "Record trajectory",
    }
