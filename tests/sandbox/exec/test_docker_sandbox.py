"""The Docker backend for real: warm containers, their walls, the image and the CLI. Skipped without an engine."""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_server.cli.sandbox import app
from sandbox.errors import BackendUnavailable, RunCancelled
from sandbox.exec.base import Cancel
from sandbox.exec.docker import DockerSandbox
from sandbox.exec.docker_engine import list_containers, open_client
from sandbox.exec.image import IMAGE_LABEL, build_image
from sandbox.testing.config import RunnerConfig
from sandbox.testing.runner import run_tests

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_ready")]

SUITE = {
    "tests/test_suite.py": """
        import pytest

        def test_ok():
            assert True

        def test_wrong():
            assert [1, 2] == [1, 3]

        @pytest.mark.xfail
        def test_known():
            assert False
    """,
}


def container_id(config: RunnerConfig, ws: Path) -> str | None:
    with DockerSandbox(ws, config.docker_image, config.docker) as sandbox, open_client() as client:
        found = [c for c in client.containers.list(all=True) if c.name == sandbox.container_name]
        return found[0].id if found else None


def test_docker_run_reports_like_the_local_one(make_workspace, runner_config, discard_containers) -> None:
    ws = make_workspace(SUITE)
    discard_containers.append(ws)
    in_docker = run_tests(ws, backend="docker", config=runner_config)
    on_host = run_tests(ws, backend="local", config=runner_config)
    assert in_docker.backend == "docker"
    assert in_docker.status == on_host.status == "failed"
    assert [(t.id, t.outcome) for t in in_docker.tests] == [(t.id, t.outcome) for t in on_host.tests]
    assert in_docker.reward == on_host.reward


def test_auto_uses_docker_when_the_engine_and_image_are_there(make_workspace, runner_config, discard_containers):
    ws = make_workspace({"tests/test_ok.py": "def test_ok():\n    pass\n"})
    discard_containers.append(ws)
    result = run_tests(ws, config=runner_config)
    assert result.backend == "docker"
    assert result.warnings == []


def test_warm_container_is_reused_between_runs(make_workspace, runner_config, discard_containers) -> None:
    ws = make_workspace({"tests/test_ok.py": "def test_ok():\n    pass\n"})
    discard_containers.append(ws)
    run_tests(ws, backend="docker", config=runner_config)
    first = container_id(runner_config, ws)
    assert run_tests(ws, backend="docker", config=runner_config).status == "passed"
    assert first is not None
    assert container_id(runner_config, ws) == first


def test_container_is_replaced_after_a_timeout(make_workspace, runner_config, discard_containers) -> None:
    hang = "import time\n\ndef test_hang():\n    time.sleep(300)\n"
    ws = make_workspace({"tests/test_hang.py": hang, "tests/test_ok.py": "def test_ok():\n    pass\n"})
    discard_containers.append(ws)
    run_tests(ws, tests=["tests/test_ok.py"], backend="docker", config=runner_config)
    before = container_id(runner_config, ws)
    result = run_tests(ws, tests=["tests/test_hang.py"], backend="docker", timeout_s=1, config=runner_config)
    assert result.status == "timeout"
    assert container_id(runner_config, ws) is None
    assert run_tests(ws, tests=["tests/test_ok.py"], backend="docker", config=runner_config).status == "passed"
    assert container_id(runner_config, ws) not in (None, before)


def test_a_cancelled_run_discards_the_container_at_once(make_workspace, runner_config, discard_containers) -> None:
    hang = "import time\n\ndef test_hang():\n    time.sleep(300)\n"
    ws = make_workspace({"tests/test_hang.py": hang, "tests/test_ok.py": "def test_ok():\n    pass\n"})
    discard_containers.append(ws)
    run_tests(ws, tests=["tests/test_ok.py"], backend="docker", config=runner_config)
    with Cancel() as cancel:
        threading.Thread(target=lambda: (time.sleep(2), cancel.set()), daemon=True).start()
        start = time.monotonic()
        with pytest.raises(RunCancelled):
            run_tests(
                ws, tests=["tests/test_hang.py"], backend="docker", timeout_s=120, config=runner_config, cancel=cancel
            )
    assert time.monotonic() - start < 30
    assert container_id(runner_config, ws) is None  # the hanging test went with it


def test_processes_left_in_the_container_are_killed_with_it(
    make_workspace, runner_config, discard_containers, live_processes: Callable[[str], list[str]]
) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    child = [sys.executable, "-c", "import time; time.sleep(300)", marker]
    daemon = f"import subprocess\n\ndef test_daemon():\n    subprocess.Popen({child!r}, start_new_session=True)\n"
    ws = make_workspace({"tests/test_daemon.py": daemon})
    discard_containers.append(ws)
    result = run_tests(ws, backend="docker", config=runner_config)
    assert result.status == "passed"
    assert "processes the tests left running were killed" in result.warnings
    assert live_processes(marker) == []


def test_container_walls_are_as_documented(make_workspace, runner_config, discard_containers) -> None:
    ws = make_workspace({"tests/test_ok.py": "def test_ok():\n    open('made-inside.txt', 'w').write('x')\n"})
    discard_containers.append(ws)
    assert run_tests(ws, backend="docker", config=runner_config).status == "passed"
    assert (ws / "made-inside.txt").stat().st_uid == os.getuid()
    with DockerSandbox(ws, runner_config.docker_image, runner_config.docker) as sandbox:
        host = sandbox.container().attrs["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["PidsLimit"] == runner_config.docker.pids_limit
    assert host["Memory"] == runner_config.docker.memory_mb * 1024 * 1024
    assert host["CapDrop"] == ["ALL"]


def test_changed_limits_replace_the_warm_container(make_workspace, runner_config, discard_containers) -> None:
    ws = make_workspace({"tests/test_ok.py": "def test_ok():\n    pass\n"})
    discard_containers.append(ws)
    run_tests(ws, backend="docker", config=runner_config)
    before = container_id(runner_config, ws)
    smaller = runner_config.model_copy(update={"docker": runner_config.docker.model_copy(update={"memory_mb": 512})})
    assert run_tests(ws, backend="docker", config=smaller).status == "passed"
    assert container_id(smaller, ws) != before


def test_docker_backend_without_the_image_says_how_to_build_it(make_workspace, runner_config: RunnerConfig) -> None:
    ws = make_workspace({"tests/test_ok.py": "def test_ok():\n    pass\n"})
    config = runner_config.model_copy(update={"docker_image": "skillbank-sandbox-missing:none"})
    with pytest.raises(BackendUnavailable, match="skillbank sandbox build-image"):
        run_tests(ws, backend="docker", config=config)


def test_build_image_makes_a_labelled_image() -> None:
    tag = f"skillbank-sandbox-test:{uuid.uuid4().hex[:8]}"
    with open_client() as client:
        info = build_image(client, tag)
        try:
            image = client.images.get(tag)
            assert image.labels[IMAGE_LABEL] == "1"
            assert info.size_bytes < 64 * 1024
        finally:
            client.images.remove(tag, force=True)


def test_cli_builds_the_image_reports_status_and_stops_containers(make_workspace, runner_config, discard_containers):
    cli = CliRunner()
    built = cli.invoke(app, ["build-image"])
    assert built.exit_code == 0, built.output
    assert "built skillbank-sandbox:latest" in built.output
    ws = make_workspace({"tests/test_ok.py": "def test_ok():\n    pass\n"})
    discard_containers.append(ws)
    run_tests(ws, backend="docker", config=runner_config)
    status = cli.invoke(app, ["status"])
    assert status.exit_code == 0
    assert "backend=auto uses: docker" in status.output
    stopped = cli.invoke(app, ["stop", "--workspace", str(ws)])
    assert stopped.exit_code == 0
    assert "removed 1 warm container(s)" in stopped.output
    with open_client() as client:
        assert str(ws) not in [warm.workspace for warm in list_containers(client)]
