"""Errors go to whoever must act: the model gets refusals it can fix, the operator gets setup problems in the
log (the client only hears that the server is misconfigured), and our bugs are logged with a trace and masked."""

from __future__ import annotations

import logging
import re
import sqlite3
from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver.exceptions import ToolError

from mcp_server.app import create_server
from mcp_server.errors import route, routed, tool_result
from mcp_server.lazy import LazySkillBank, SkillBankUnavailable
from mcp_server.services import build_deps
from mcp_server.settings import Settings
from sandbox.errors import BackendUnavailable, InterpreterNotFound, PatchError, WorkspaceUnavailable, WriteFailed
from sandbox.patch import FileChange, PatchResult
from skills_store.errors import ConfigError, InvalidInput, StoreUnreachable

pytestmark = pytest.mark.anyio

INCIDENT = re.compile(r"logged as (err-[0-9a-f]{12})")


class ExplodingBank:
    """A skill bank with a bug: its search raises something no tool expects."""

    def search(self, *args, **kwargs):
        raise RuntimeError("internal detail /secret/path/catalog.db row 7")

    def close(self) -> None:
        pass


def raise_config_error():
    raise ConfigError("cannot open /srv/private/chroma: permission denied; fix SKILLBANK_HOME")


async def test_a_configuration_problem_is_logged_for_the_operator_and_masked_for_the_model(
    test_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    deps = build_deps(test_settings, tools=["search_skills"])
    deps.skills = LazySkillBank(raise_config_error)
    with caplog.at_level(logging.ERROR):
        async with Client(create_server(deps)) as client:
            result = await client.call_tool("search_skills", {"query": "KeyError: 'x'"})
    assert result.is_error
    text = result.content[0].text
    assert "the skill bank is unavailable on this server" in text
    assert "operator" in text
    assert "/srv/private" not in text
    incident = INCIDENT.search(text)
    assert incident is not None
    logged = [r.getMessage() for r in caplog.records if incident.group(1) in r.getMessage()]
    assert logged
    assert "/srv/private/chroma" in logged[0]


async def test_our_own_bug_is_logged_with_a_trace_and_masked(
    test_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    deps = build_deps(test_settings, tools=["search_skills"])
    deps.skills = LazySkillBank(ExplodingBank)  # type: ignore[arg-type] - a stand-in with a bug
    with caplog.at_level(logging.ERROR):
        async with Client(create_server(deps)) as client:
            result = await client.call_tool("search_skills", {"query": "KeyError: 'x'"})
    assert result.is_error
    text = result.content[0].text
    incident = INCIDENT.search(text)
    assert incident is not None
    assert text.endswith(f"internal error, logged as {incident.group(1)}; the server log has the details")
    assert "secret" not in text
    record = next(r for r in caplog.records if incident.group(1) in r.getMessage())
    assert record.exc_info is not None
    assert "internal detail" in str(record.exc_info[1])


async def test_the_captured_step_keeps_the_real_error_for_the_operator(test_settings: Settings) -> None:
    deps = build_deps(test_settings, tools=["search_skills"])
    deps.skills = LazySkillBank(raise_config_error)
    async with Client(create_server(deps)) as client:
        await client.call_tool("search_skills", {"query": "KeyError: 'x'"})
    (traj,) = deps.trajectories.list()
    (step,) = deps.trajectories.get(traj.trajectory_id).steps[:1]
    assert step.ok is False
    assert "SkillBankUnavailable" in step.content


async def test_a_refusal_reaches_the_model_word_for_word(test_settings: Settings, tmp_path: Path) -> None:
    deps = build_deps(test_settings, tools=["apply_patch"])
    async with Client(create_server(deps)) as client:
        result = await client.call_tool("apply_patch", {"patch": "not a patch at all"})
    assert result.is_error
    assert "logged as" not in result.content[0].text
    assert "internal error" not in result.content[0].text


def test_a_workaround_the_sandbox_offers_reaches_the_model(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        error = route("run_tests", BackendUnavailable("no Docker engine answers at /var/run/docker.sock"))
    assert "Meanwhile you can use backend='local'." in str(error)
    assert "docker.sock" not in str(error)


@pytest.mark.parametrize(
    ("exc", "public"),
    [
        (BackendUnavailable("no Docker engine at unix:///var/run/docker.sock"), "sandbox backend is not available"),
        (SkillBankUnavailable("the skill bank could not be opened: /x"), "skill bank is unavailable"),
        (ConfigError("bad SKILLBANK_CHROMA_URL http://10.0.0.3:8000"), "misconfigured"),
        (sqlite3.DatabaseError("database disk image is malformed"), "storage failed"),
        (StoreUnreachable("the Chroma server at http://10.0.0.3:8000 did not answer"), "Chroma server"),
        (OSError(28, "No space left on device"), "system error"),
        (WriteFailed("/srv/ws/a.py: No space left on device"), "could not write the files"),
        (WorkspaceUnavailable("/srv/ws is gone"), "workspace is unavailable"),
        (InterpreterNotFound("SKILLBANK_TEST_PYTHON=/opt/py3 does not exist"), "sandbox is misconfigured"),
    ],
)
def test_environment_problems_tell_the_client_no_internals(
    exc: Exception, public: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        error = route("run_tests", exc)
    assert public in str(error)
    assert str(exc) not in str(error)
    assert str(exc) in caplog.text


@pytest.mark.parametrize("exc", [InvalidInput("no trajectory 'traj-x'"), PatchError("hunk 1 does not match")])
def test_refusals_keep_their_message(exc: Exception, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        assert str(route("apply_patch", exc)) == str(exc)
    assert not caplog.records


def test_a_stray_surrogate_in_a_tool_result_is_escaped_not_fatal() -> None:
    change = FileChange(action="add", path="latin\udce9.txt", hunks=1)
    result = tool_result(PatchResult(applied=True, dry_run=False, files=[change]), "x\udcff")
    assert result.structured_content["files"][0]["path"] == "latin\\xe9.txt"
    assert result.content[0].text == "x\\xff"
    result.model_dump_json()  # what the stdio writer does; a lone surrogate made it raise and the server exit


async def test_a_tool_error_naming_a_file_that_is_not_utf8_is_escaped() -> None:
    async def refuse() -> None:
        raise ToolError("cannot patch bad\udcff.py: the hunk does not match")

    async def bug() -> None:
        raise WriteFailed("could not write bad\udcff.py")

    with pytest.raises(ToolError, match=r"bad\\xff\.py") as refused:
        await routed("apply_patch", refuse)()
    str(refused.value).encode("utf-8")
    with pytest.raises(ToolError) as failed:
        await routed("apply_patch", bug)()
    str(failed.value).encode("utf-8")
