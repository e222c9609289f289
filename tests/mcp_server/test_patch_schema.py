"""apply_patch publishes its output schema flat (no `$ref`, nullable fields as type lists): it accepts and refuses
exactly what the schema pydantic generates does, and clients check results against it in about half the time."""

from __future__ import annotations

import json

import pytest
from jsonschema.validators import validator_for
from mcp import Client
from referencing import Registry

from mcp_server.app import create_server
from mcp_server.services import build_deps
from mcp_server.toolset import flat_schema
from sandbox.patch import FileChange, PatchResult, SyntaxIssue

pytestmark = pytest.mark.anyio

GOOD = PatchResult(
    applied=True,
    dry_run=False,
    files=[
        FileChange(path="a.py", action="modify", hunks=2, offset_lines=-3),
        FileChange(path="b.py", action="rename", hunks=0, old_path="old.py", match="fuzz1", fuzzy=True, mode="100755"),
    ],
    syntax_errors=[SyntaxIssue(path="a.py", line=3, message="invalid syntax"), SyntaxIssue(path="b.py", message="x")],
    warnings=["b.py hunk 1: matched with fuzz1"],
).model_dump(mode="json")


def _bad(path: tuple[str | int, ...], value: object) -> dict:
    instance = json.loads(json.dumps(GOOD))
    target = instance
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return instance


BAD = [
    _bad(("files", 0, "old_path"), 3),
    _bad(("files", 0, "mode"), False),
    _bad(("files", 1, "hunks"), -1),
    _bad(("files", 1, "action"), "copy"),
    _bad(("files", 0, "match"), "fuzz3"),
    _bad(("syntax_errors", 0, "line"), "3"),
    _bad(("applied",), None),
    {k: v for k, v in GOOD.items() if k != "dry_run"},
]


def _errors(schema: dict, instance: dict) -> list[str]:
    validator = validator_for(schema)(schema, registry=Registry())
    return [error.message for error in validator.iter_errors(instance)]


def test_the_flat_schema_accepts_and_refuses_what_the_generated_one_does() -> None:
    generated = PatchResult.model_json_schema()
    flat = flat_schema(generated)
    assert "$ref" not in json.dumps(flat)
    assert "$defs" not in flat
    assert _errors(flat, GOOD) == _errors(generated, GOOD) == []
    for instance in BAD:
        assert _errors(generated, instance)
        assert _errors(flat, instance)


def test_a_schema_with_a_recursive_ref_is_published_as_it_is() -> None:
    tree = {
        "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
        "$ref": "#/$defs/Node",
    }
    assert flat_schema(tree) is tree


async def test_the_server_publishes_apply_patchs_output_schema_flat(test_settings) -> None:
    async with Client(create_server(build_deps(test_settings))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    schema = tools["apply_patch"].output_schema
    assert schema is not None
    assert "$ref" not in json.dumps(schema)
    assert schema["properties"]["files"]["items"]["properties"]["old_path"]["type"] == ["string", "null"]
    assert _errors(schema, GOOD) == []


def test_a_file_entry_leaves_out_its_null_old_path_and_mode_and_reads_back_the_same() -> None:
    plain, renamed = GOOD["files"]
    assert (renamed["old_path"], renamed["mode"]) == ("old.py", "100755")
    assert set(plain) == {"path", "action", "hunks", "offset_lines", "fuzzy", "match"}
    again = PatchResult.model_validate(GOOD)
    assert (again.files[0].old_path, again.files[0].mode) == (None, None)
    assert again.model_dump(mode="json") == GOOD
    assert _errors(flat_schema(PatchResult.model_json_schema()), GOOD) == []
