"""`SKILLBANK_EMBEDDER` is checked when the settings are read: a spec the embedder factory would refuse at the
first search stops `serve` at start-up (exit status 2, a message saying what to use) instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from mcp_server.settings import Settings
from skills_store.embedders import make_embedder
from skills_store.errors import ConfigError


@pytest.mark.parametrize(
    "spec",
    [
        "minilm",
        "minilm:int8",
        "minilm:onnxruntime",
        "minilm:torch",
        "hash",
        "hash:64",
        "sentence-transformers:all-MiniLM-L6-v2",
    ],
)
def test_every_form_the_embedder_factory_accepts_is_a_valid_setting(spec: str) -> None:
    assert Settings(embedder=spec).embedder == spec


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "nope",
            r"unknown embedder 'nope': use 'minilm' \('minilm:int8', 'minilm:onnxruntime', 'minilm:torch'\), "
            "'sentence-transformers",
        ),
        ("minilm:tf", "unknown embedder 'minilm:tf'"),
        ("MiniLM", "unknown embedder 'MiniLM'"),
        (" minilm", "unknown embedder ' minilm'"),
        ("hash:x", "the hash dimension must be an integer"),
        ("hash:4", "bad embedder 'hash:4'"),
        ("hashy", "unknown embedder 'hashy'"),
        ("sentence-transformers:", "names no model"),
        ("sentence-transformers:  ", "names no model"),
    ],
)
def test_a_spec_the_factory_refuses_is_an_invalid_setting(spec: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(embedder=spec)


@pytest.mark.parametrize("spec", ["nope", "hash:x", "hash:4", "hashy"])
def test_the_factory_refuses_what_the_settings_refuse(spec: str) -> None:
    with pytest.raises((ConfigError, ValueError)):
        make_embedder(spec)


def test_serve_with_a_bad_embedder_stops_at_start_up_with_exit_status_2(tmp_path: Path) -> None:
    env = {**os.environ, "SKILLBANK_HOME": str(tmp_path / "home"), "SKILLBANK_EMBEDDER": "nope"}
    out = subprocess.run(
        [sys.executable, "-m", "mcp_server", "serve"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert "invalid settings: SKILLBANK_EMBEDDER:" in out.stderr
    assert "unknown embedder 'nope'" in out.stderr
    assert "Traceback" not in out.stderr
