"""SKILLBANK_CHROMA_URL: the same skill bank code against a real `chroma run` server process."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from skills_store.bank import SkillBank
from skills_store.embedders import make_embedder
from skills_store.errors import ConfigError

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    exe = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    if exe is None:
        pytest.fail("the chroma CLI (from the chromadb package) is not installed")
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "run", "--path", str(tmp_path / "server-data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(timeout=1.0) as client:
            for _ in range(300):
                if proc.poll() is not None:
                    pytest.fail(f"chroma run exited with {proc.returncode}")
                try:
                    if client.get(f"{url}/api/v2/heartbeat").status_code == 200:
                        break
                except httpx.TransportError:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=0.1)
            else:
                pytest.fail("chroma run did not answer within 30 s")
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def test_skills_written_through_a_chroma_server_are_found_and_survive_a_new_catalog(
    chroma_server: str, tmp_path: Path, skill_factory
) -> None:
    bank = SkillBank.open(tmp_path / "a", make_embedder("hash"), chroma_url=chroma_server)
    bank.upsert(
        [
            skill_factory("zero", "Division by zero", "ZeroDivisionError: division by zero", language="python"),
            skill_factory("key", "Missing key", "KeyError: 'id'", language="python"),
        ]
    )
    assert bank.search("ZeroDivisionError: division by zero", 1, count_use=False)[0].skill.skill_id == "zero"
    bank.close()
    # A second instance with an empty local catalog rebuilds it from the shared server.
    other = SkillBank.open(tmp_path / "b", make_embedder("hash"), chroma_url=chroma_server)
    try:
        assert other.count() == 2
        assert other.search("KeyError: 'id'", 1, language="python", count_use=False)[0].skill.skill_id == "key"
    finally:
        other.close()


def test_an_unreachable_chroma_url_is_a_config_error_naming_it(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(ConfigError, match=rf"cannot open the Chroma skill store at {url}"):
        SkillBank.open(tmp_path, make_embedder("hash"), chroma_url=url)


def test_a_malformed_chroma_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not an http"):
        SkillBank.open(tmp_path, make_embedder("hash"), chroma_url="localhost:8000")
