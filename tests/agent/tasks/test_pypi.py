"""Fetching sdists from PyPI's JSON API (served here by a mock transport): checked, then unpacked safely."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import httpx
import pytest

from agent.tasks.errors import SpecError, SynthError
from agent.tasks.pypi import fetch_sdist, parse_spec, read_manifest
from agent.tasks.synth import SynthConfig, synthesize
from tests.agent.tasks.conftest import FILES, PYTHON, write_project


def sdist_bytes(tmp_path: Path) -> bytes:
    root = write_project(tmp_path / "calc-1.0", FILES)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(root, arcname="calc-1.0")
    return buffer.getvalue()


def pypi(archive: bytes, digest: str | None = None) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/pypi/calc/1.0/json":
            entry = {"packagetype": "sdist", "filename": "calc-1.0.tar.gz", "url": "https://files.example/calc.tgz",
                     "digests": {"sha256": digest or hashlib.sha256(archive).hexdigest()}}  # fmt: skip
            return httpx.Response(200, json={"urls": [{"packagetype": "bdist_wheel"}, entry]})
        if request.url.path == "/pypi/calc/json":  # a mirror's project page: relative file URLs
            entry = {"packagetype": "sdist", "filename": "calc-0.9.tar.gz", "url": "../../files/calc-0.9.tgz",
                     "digests": {"sha256": hashlib.sha256(archive).hexdigest()}}  # fmt: skip
            return httpx.Response(200, json={"releases": {"0.9": [entry]}})
        if request.url.path == "/files/calc-0.9.tgz":
            return httpx.Response(200, content=archive)
        if request.url.host == "files.example":
            return httpx.Response(200, content=archive)
        return httpx.Response(404)

    return httpx.MockTransport(handle)


def test_an_sdist_is_downloaded_unpacked_and_turned_into_tasks(tmp_path: Path) -> None:
    root = fetch_sdist("calc==1.0", tmp_path / "cache", transport=pypi(sdist_bytes(tmp_path)))
    assert root.name == "calc-1.0"
    assert (root / "calc" / "stats.py").is_file()
    report = synthesize(root, tmp_path / "tasks", SynthConfig(n=1, test_python=PYTHON), project="calc",
                        source="pypi:calc==1.0")  # fmt: skip
    assert len(report.tasks) == 1


def test_a_release_only_listed_on_the_project_page_is_found_there(tmp_path: Path) -> None:
    root = fetch_sdist("calc==0.9", tmp_path / "cache", transport=pypi(sdist_bytes(tmp_path)))
    assert (root / "calc" / "stats.py").is_file()


def test_an_sdist_whose_digest_does_not_match_is_not_unpacked(tmp_path: Path) -> None:
    with pytest.raises(SynthError, match="does not match the sha256"):
        fetch_sdist("calc==1.0", tmp_path / "cache", transport=pypi(sdist_bytes(tmp_path), digest="0" * 64))
    assert not (tmp_path / "cache" / "src").exists()


def test_an_unknown_release_and_a_malformed_spec_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SynthError, match=r"PyPI has no release calc==2\.0"):
        fetch_sdist("calc==2.0", tmp_path, transport=pypi(b""))
    with pytest.raises(SpecError, match="is not NAME==VERSION"):  # bad input, not an unusable source
        parse_spec("calc>=1")


def test_the_manifest_lists_pinned_releases(tmp_path: Path) -> None:
    manifest = tmp_path / "m.txt"
    manifest.write_text("# real projects\nmore-itertools==10.2.0\n\ntoolz==0.12.1  # small\n")
    assert read_manifest(manifest) == ["more-itertools==10.2.0", "toolz==0.12.1"]
    manifest.write_text("toolz\n")
    with pytest.raises(SpecError):
        read_manifest(manifest)
