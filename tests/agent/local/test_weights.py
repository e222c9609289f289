"""Assembling the model file from its part packages: in order, checked by sha256, once."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from agent.local.weights import LocalModel, LocalModelError, assemble


def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: list[bytes]) -> tuple[str, ...]:
    names = []
    for i, chunk in enumerate(chunks, 1):
        name = f"fake_model_part{i}_{tmp_path.name[-6:]}"
        package = tmp_path / "site" / name
        (package / "data").mkdir(parents=True)
        (package / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        (package / "__init__.py").write_text(
            "import os\ndef get_part_path():\n"
            f"    return os.path.join(os.path.dirname(__file__), 'data', 'part{i:02d}.bin')\n"
        )
        names.append(name)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return tuple(names)


def test_parts_are_concatenated_in_order_checked_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]
    whole = b"".join(chunks)
    spec = LocalModel("m", "m.gguf", fake_parts(tmp_path, monkeypatch, chunks), hashlib.sha256(whole).hexdigest(),
                      len(whole))  # fmt: skip
    path = assemble(spec, tmp_path / "home")
    assert path.read_bytes() == whole
    for name in spec.packages:
        sys.modules.pop(name, None)
    monkeypatch.setattr("agent.local.weights.part_paths", lambda _spec: pytest.fail("reassembled"))
    assert assemble(spec, tmp_path / "home") == path


def test_a_digest_mismatch_leaves_no_model_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = LocalModel("m", "m.gguf", fake_parts(tmp_path, monkeypatch, [b"x", b"y"]), "0" * 64, 2)
    with pytest.raises(LocalModelError, match="has sha256"):
        assemble(spec, tmp_path / "home")
    assert list((tmp_path / "home" / "models").iterdir()) == []


def test_missing_part_packages_say_how_to_install_them(tmp_path: Path) -> None:
    spec = LocalModel("m", "m.gguf", ("no_such_part_package_1",), "0" * 64, 1)
    hint = r"no-such-part-package-1 is not installed: `.venv/bin/pip install -e '.\[local\]'` in the skillbank checkout"
    with pytest.raises(LocalModelError, match=hint):
        assemble(spec, tmp_path / "home")
