"""Shared fixtures. No test reaches an LLM: model requests are disabled for the whole session."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models

from mcp_server.settings import Settings
from skills_store.models import Skill

models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture
def skillbank_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh data dir; SKILLBANK_HOME points at it for subprocesses started by the test."""
    home = tmp_path / "skillbank-home"
    home.mkdir()
    monkeypatch.setenv("SKILLBANK_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def _no_network_for_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hugging Face libraries must never try the network in tests."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def make_skill(skill_id: str, title: str, pattern: str, strategy: str = "Fix it.", **extra: Any) -> Skill:
    return Skill(skill_id=skill_id, title=title, pattern=pattern, strategy=strategy, **extra)


@pytest.fixture
def skill_factory() -> Callable[..., Skill]:
    """`skill_factory(id, title, pattern, strategy="Fix it.", **fields)` builds a valid Skill."""
    return make_skill


@pytest.fixture
def hash_bank(tmp_path: Path):
    """A real skill bank (embedded Chroma + catalog) in a temp dir, with the deterministic hash embedder."""
    from skills_store.bank import SkillBank
    from skills_store.embedders import make_embedder

    bank = SkillBank.open(tmp_path / "bank", make_embedder("hash"))
    yield bank
    bank.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def test_settings(tmp_path: Path) -> Settings:
    """Settings for an in-process server: temp data dir, hash embedder, no starter pack."""
    return Settings(home=tmp_path / "home", embedder="hash", starter_skills=False, workspace=tmp_path)
