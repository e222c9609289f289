"""Argument types are checked strictly, through a real in-memory client: a value of the wrong JSON type is refused
(not converted the way pydantic's lax mode would), in words naming the argument, and nothing runs or is stored."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from mcp_server.app import TOOL_MODULES, create_server
from mcp_server.services import build_deps
from mcp_server.settings import Settings
from mcp_server.tool_inputs import exact_model
from mcp_server.toolset import ToolSet
from skills_store.models import Step

pytestmark = pytest.mark.anyio

EDIT = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
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


def stored_steps(deps) -> int:
    return sum(deps.trajectories.step_count(t.trajectory_id) for t in deps.trajectories.list())


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        (
            "run_tests",
            {"tests": ["test_marker.py"], "timeout_s": True},
            "argument 'timeout_s': Input should be a valid integer, not a boolean; send an integer (>= 1, <= 3600)",
        ),
        (
            "run_tests",
            {"tests": ["test_marker.py"], "timeout_s": "30"},
            "argument 'timeout_s': Input should be a valid integer, not a string; send an integer",
        ),
        (
            "search_skills",
            {"query": "KeyError", "k": True},
            "argument 'k': Input should be a valid integer, not a boolean; send an integer (>= 1, <= 50)",
        ),
        (
            "search_skills",
            {"query": "KeyError", "min_confidence": False},
            "argument 'min_confidence': Input should be a valid number, not a boolean; send a number",
        ),
        (
            "apply_patch",
            {"patch": EDIT, "dry_run": "off"},
            "argument 'dry_run': Input should be a valid boolean, not a string; send true or false",
        ),
        (
            "apply_patch",
            {"patch": EDIT, "dry_run": 0},
            "argument 'dry_run': Input should be a valid boolean, not a number; send true or false",
        ),
        (
            "record_trajectory",
            {"steps": [{"kind": "thought", "content": "x"}], "final": "yes"},
            "argument 'final': Input should be a valid boolean, not a string; send true or false",
        ),
        (
            "record_trajectory",
            {"steps": [{"kind": "action", "content": "x", "ok": "true", "tokens_in": True}]},
            "argument 'steps[0].ok': Input should be a valid boolean, not a string; send true or false or null",
        ),
    ],
)
async def test_a_value_of_the_wrong_json_type_is_refused_and_nothing_runs_or_is_stored(
    settings: Settings, workspace: Path, tool: str, args: dict, expected: str
) -> None:
    deps = build_deps(settings)
    async with Client(create_server(deps)) as client:
        result = await client.call_tool(tool, args)
    assert result.is_error
    text = result.content[0].text
    assert f"{tool} refused its arguments; nothing was done." in text
    assert expected in text
    assert "pydantic" not in text
    assert not (workspace / "ran").exists()
    assert (workspace / "a.py").read_text() == "x = 1\n"
    assert stored_steps(deps) == 0
    assert all(t.status == "open" for t in deps.trajectories.list())


async def test_a_nested_step_field_of_the_wrong_type_is_named_with_its_place(settings: Settings) -> None:
    async with Client(create_server(build_deps(settings))) as client:
        result = await client.call_tool(
            "record_trajectory", {"steps": [{"kind": "thought"}, {"kind": "action", "tokens_in": True}]}
        )
    assert result.is_error
    assert "argument 'steps[1].tokens_in': Input should be a valid integer, not a boolean" in result.content[0].text


async def test_values_of_the_right_json_type_are_still_accepted(settings: Settings, workspace: Path) -> None:
    deps = build_deps(settings)
    async with Client(create_server(deps)) as client:
        search = await client.call_tool("search_skills", {"query": "KeyError", "k": 5.0, "min_confidence": 0})
        # The SDK parses a list or an object sent as a JSON string (clients that stringify them): kept.
        listed = await client.call_tool("search_skills", {"query": "KeyError", "tags": "[]"})
        dry = await client.call_tool("apply_patch", {"patch": EDIT, "dry_run": True})
        recorded = await client.call_tool(
            "record_trajectory",
            {
                "steps": [
                    {"kind": "action", "content": "x", "ok": False, "ts": "2024-05-01T12:00:00Z", "tokens_in": 3.0},
                    {"kind": "observation", "content": "y", "duration_s": 2, "cost_usd": 0.25},
                ],
                "final": False,
            },
        )
        stringified = await client.call_tool("record_trajectory", {"steps": '[{"kind": "thought", "content": "z"}]'})
    for result in (search, listed, dry, recorded, stringified):
        assert not result.is_error, result.content[0].text
    assert (workspace / "a.py").read_text() == "x = 1\n"
    traj = deps.trajectories.get(recorded.structured_content["trajectory_id"])
    first, second = (s for s in traj.steps if s.content in ("x", "y"))
    assert (first.ok, first.tokens_in, first.ts.year) == (False, 3, 2024)
    assert type(first.tokens_in) is int
    assert (second.duration_s, second.cost_usd) == (2.0, 0.25)


def test_the_published_argument_schemas_are_the_sdks_with_unknown_arguments_forbidden(settings: Settings) -> None:
    import importlib

    toolset = ToolSet()
    deps = build_deps(settings)
    for module in TOOL_MODULES.values():
        importlib.import_module(module).register(toolset, deps)
    assert sorted(toolset.tools) == sorted(TOOL_MODULES)
    for tool in toolset.tools.values():
        sdk_model = tool.fn_metadata.arg_model.__mro__[1]  # the model the SDK built from the signature
        assert tool.parameters == {**sdk_model.model_json_schema(by_alias=True), "additionalProperties": False}


def test_an_exact_model_leaves_the_model_it_copies_lax() -> None:
    exact = exact_model(Step)
    assert exact is not Step
    assert issubclass(exact, Step)
    assert exact.model_json_schema() == Step.model_json_schema()
    assert Step.model_validate({"kind": "action", "ok": "yes"}).ok is True  # a Step elsewhere: as before
    with pytest.raises(ValueError, match="valid boolean"):
        exact.model_validate({"kind": "action", "ok": "yes"})
