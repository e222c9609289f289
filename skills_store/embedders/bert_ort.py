"""The BERT encoder of `bert.py` run by onnxruntime: the same checkpoint, tokenizer and arithmetic, no torch.

`OrtBertEncoder.pooled(texts)` gives what `MiniLMEmbedder` stores: the mean of the last hidden states over the
attention mask, L2-normalised (checked against the torch encoder and `SentenceTransformer` in the tests, to
1e-5 in full precision). The graph is built from the weights at load (`onnx_graph.bert_graph`); onnxruntime fuses
it and keeps its own copy of the weights, so the arrays read from the file are dropped once the session exists.

With `int8` (the weight matrices in 8 bits, `onnx_graph.quantize_columns`) each text is run alone: the 8-bit
product quantizes its input with one scale for the whole tensor, so in a batch a text's vector would depend on the
other texts and the padding (measured: up to 0.045 a component). Alone, a text always gets the same vector, and
it is faster than batches, which pad short texts to the longest (300 skill documents: 5.9 s one by one against
10.5 s in batches of 64). Vectors: cosine 0.986 or more to full precision's on 481 real texts (0.993 on average),
down to ~0.97 on degenerate ones (the empty text, thousands of one character).

Threads: one intra-op pool of the cores this process may use (`skills_store.cores`: affinity and cgroup quota),
at most `MAX_THREADS` (a query's operators are too small to share among more; a batch's gain little). Its workers
do not spin waiting for the next operator or request (`session.intra_op.allow_spinning` 0): with spinning, one
thread kept a core busy between a server's encodes, taking it from the client and the server (measured: 20 ms of
CPU per 20 ms idle), for ~1.5 ms less per short query back to back and none once queries are 25 ms apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from skills_store.cores import usable_cores
from skills_store.embedders.bert import Checkpoint, tokenizable
from skills_store.embedders.onnx_graph import bert_graph
from skills_store.errors import ConfigError

#: A run over at least this many texts hands its memory back afterwards (what `worker_main.TRIM_AFTER_ROWS` does
#: for the heap): a reindex's batches of long texts would otherwise leave the arena ~180 MB larger for good. Full
#: precision only: an 8-bit run holds one text (2,000 long texts left the worker's RSS 14 MB above its loaded size).
SHRINK_AFTER_ROWS = 16
MAX_THREADS = 4


class OrtBertEncoder:
    def __init__(self, path: Path, max_length: int, *, threads: int | None = None, int8: bool = False) -> None:
        try:
            import onnxruntime
        except Exception as exc:  # not installed, or installed without its shared library (ImportError, OSError)
            raise ConfigError(
                f"MiniLM on onnxruntime: onnxruntime cannot be imported ({type(exc).__name__}: {exc}); "
                "reinstall it (make install) or use SKILLBANK_EMBEDDER=minilm:torch"
            ) from exc
        from safetensors.numpy import load_file

        checkpoint = Checkpoint(path, max_length, load_file)
        self.max_length = checkpoint.max_length
        self.tokenizer = checkpoint.tokenizer
        self.int8 = int8
        model = bert_graph(checkpoint.weights, checkpoint.layers, checkpoint.heads, checkpoint.eps, int8=int8)
        del checkpoint
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = max(1, threads or min(MAX_THREADS, usable_cores()))
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only: its warnings would go to the server's stderr
        try:
            self._session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ConfigError(f"onnxruntime cannot load the BERT graph of {path}: {exc}") from exc
        # A batch's buffers go back to the system when it is done (a query's stay in the arena for the next one).
        self._shrink = onnxruntime.RunOptions()
        self._shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")

    def pooled(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled, L2-normalised float32 vectors of `texts`: in full precision one run padded to the longest of
        them, with 8-bit weights one run a text."""
        if self.int8 and len(texts) > 1:
            return np.concatenate([self._run([text]) for text in texts])
        return self._run(texts)

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        batch = self.tokenizer.encode_batch(tokenizable(texts))
        ids = np.array([item.ids for item in batch], dtype=np.int64)
        mask = np.array([item.attention_mask for item in batch], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "position_ids": np.ascontiguousarray(np.broadcast_to(np.arange(ids.shape[1], dtype=np.int64), ids.shape)),
            "token_type_ids": np.array([item.type_ids for item in batch], dtype=np.int64),
            # Padded keys get the dtype's lowest value, as transformers' extended attention mask does.
            "mask_bias": (1.0 - mask[:, None, None, :].astype(np.float32)) * np.finfo(np.float32).min,
        }
        hidden = self._session.run(["hidden"], feed, self._shrink if len(batch) >= SHRINK_AFTER_ROWS else None)[0]
        weights = mask[..., None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(summed, axis=1, keepdims=True)
        return (summed / np.clip(norms, 1e-12, None)).astype(np.float32)
