"""`skillbank sandbox` without a Docker engine: it says what is missing and how to fix it."""

from __future__ import annotations

from typer.testing import CliRunner

from mcp_server.cli.sandbox import app

NO_ENGINE = ["--docker-host", "unix:///nonexistent/skillbank-test.sock"]


def test_build_image_without_an_engine_fails_with_how_to_fix_it() -> None:
    result = CliRunner().invoke(app, ["build-image", *NO_ENGINE])
    assert result.exit_code == 1
    assert "start dockerd or set DOCKER_HOST" in result.output


def test_status_names_the_backend_auto_would_use() -> None:
    result = CliRunner().invoke(app, ["status", *NO_ENGINE])
    assert result.exit_code == 0
    assert "docker:" in result.output
    assert "unavailable" in result.output
    assert "backend=auto uses: local" in result.output


def test_stop_without_an_engine_fails_with_how_to_fix_it() -> None:
    result = CliRunner().invoke(app, ["stop", *NO_ENGINE])
    assert result.exit_code == 1
    assert "start dockerd" in result.output
