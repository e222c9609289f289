"""Shared fixtures. No test reaches an LLM: model requests are disabled for the whole session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai import models

models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture
def skillbank_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh data dir; SKILLBANK_HOME points at it for subprocesses started by the test."""
    home = tmp_path / "skillbank-home"
    home.mkdir()
    monkeypatch.setenv("SKILLBANK_HOME", str(home))
    yield home


@pytest.fixture(autouse=True)
def _no_network_for_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hugging Face libraries must never try the network in tests."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
