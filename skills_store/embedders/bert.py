"""A BERT encoder in plain torch, for the packaged all-MiniLM-L6-v2: the weights of `model.safetensors` and the
tokenizer of `tokenizer.json`, nothing from `transformers`.

Why not `transformers.AutoModel`: importing its BERT modelling code costs ~130 MB of resident memory and about a
second of start-up (measured: `import torch` 219 MB, + `BertModel` 365 MB, loaded 376 MB), for a forward pass that
is a dozen lines. The embedder worker holds this model for the server's whole life, so those megabytes are what a
user pays for every open editor. Parity with `SentenceTransformer` is checked in the tests (to 1e-4).

Only what inference of a BERT-architecture encoder with absolute positions needs: word + position + token-type
embeddings, post-norm layers (self-attention, GELU feed-forward), no dropout, no pooler. A checkpoint that is not
that shape is refused with the names it lacks, never run half-loaded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skills_store.errors import ConfigError

_EMBEDDINGS = ("word_embeddings.weight", "position_embeddings.weight", "token_type_embeddings.weight")
_LAYER = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)
_NORMS = ("attention.output.LayerNorm", "output.LayerNorm")


_SURROGATE = re.compile("[\ud800-\udfff]")


def tokenizable(texts: Sequence[str]) -> list[str]:
    """`texts` with each lone surrogate replaced by U+FFFD, which the tokenizers (Rust strings) cannot take: a
    command-line argument's undecodable byte (`caf\xe9` arrives as `caf\udce9`) or a `\ud800` escape in JSON."""
    return [text if text.isascii() or not _SURROGATE.search(text) else _SURROGATE.sub("\ufffd", text) for text in texts]


class Checkpoint:
    """A BERT checkpoint's settings, its tokenizer and its weights by name (checked), whatever runs it."""

    def __init__(self, path: Path, max_length: int, load: Callable[[str], dict[str, Any]]) -> None:
        from tokenizers import Tokenizer

        config = json.loads((path / "config.json").read_text())
        if config.get("model_type") != "bert" or config.get("position_embedding_type", "absolute") != "absolute":
            raise ConfigError(f"{path} is not a BERT model with absolute positions, the only kind this loader runs")
        if config.get("hidden_act", "gelu") != "gelu":
            raise ConfigError(f"{path}: activation {config.get('hidden_act')!r} is not supported (only 'gelu')")
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_length = min(max_length, int(config.get("max_position_embeddings", 512)))
        self.weights = check_weights(load(str(path / "model.safetensors")), self.layers, path)
        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        # The file's own settings (fixed padding to 128, truncation at 128) are sentence-transformers' defaults for
        # other uses; the pipeline pads to the longest text of a batch and truncates at `max_seq_length`.
        tokenizer.enable_truncation(max_length=self.max_length)
        pad_id = int(config.get("pad_token_id", 0))
        tokenizer.enable_padding(pad_id=pad_id, pad_token=tokenizer.id_to_token(pad_id) or "[PAD]")
        self.tokenizer = tokenizer


def check_weights(weights: dict[str, Any], layers: int, path: Path) -> dict[str, Any]:
    """The tensors by their names without a `bert.` prefix; every one the forward pass reads must be there."""
    weights = {name.removeprefix("bert."): tensor for name, tensor in weights.items()}
    needed = [f"embeddings.{name}" for name in _EMBEDDINGS]
    needed += ["embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for i in range(layers):
        needed += [f"encoder.layer.{i}.{part}.{kind}" for part in (*_LAYER, *_NORMS) for kind in ("weight", "bias")]
    missing = [name for name in needed if name not in weights]
    if missing:
        raise ConfigError(f"{path}/model.safetensors lacks {len(missing)} tensor(s), e.g. {', '.join(missing[:3])}")
    return weights


class BertEncoder:
    """`encode(texts)` -> (last hidden states, attention mask) as torch tensors, like `AutoModel(...)` would."""

    def __init__(self, path: Path, max_length: int) -> None:
        import torch
        from safetensors.torch import load_file

        self._torch = torch
        checkpoint = Checkpoint(path, max_length, load_file)
        self.heads, self.eps, self.max_length = checkpoint.heads, checkpoint.eps, checkpoint.max_length
        self.tokenizer = checkpoint.tokenizer
        weights = checkpoint.weights
        weights["layers"] = [
            {part: (weights[f"encoder.layer.{i}.{part}.weight"], weights[f"encoder.layer.{i}.{part}.bias"])
             for part in (*_LAYER, *_NORMS)}
            for i in range(checkpoint.layers)
        ]  # fmt: skip
        self.weights = weights

    def encode(self, texts: Sequence[str]) -> tuple[Any, Any]:
        torch = self._torch
        functional = torch.nn.functional
        batch = self.tokenizer.encode_batch(tokenizable(texts))
        ids = torch.tensor([item.ids for item in batch], dtype=torch.long)
        types = torch.tensor([item.type_ids for item in batch], dtype=torch.long)
        mask = torch.tensor([item.attention_mask for item in batch], dtype=torch.long)
        w = self.weights
        length = ids.shape[1]
        hidden = (
            functional.embedding(ids, w["embeddings.word_embeddings.weight"])
            + w["embeddings.position_embeddings.weight"][:length].unsqueeze(0)
            + functional.embedding(types, w["embeddings.token_type_embeddings.weight"])
        )
        dim = hidden.shape[-1]
        hidden = functional.layer_norm(
            hidden, (dim,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps
        )
        # Padded keys get the dtype's lowest value, as transformers' extended attention mask does.
        bias = (1.0 - mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
        head_dim = dim // self.heads
        for layer in w["layers"]:
            hidden = self._layer(hidden, layer, bias, head_dim)
        return hidden, mask

    def _layer(self, hidden: Any, layer: dict[str, Any], bias: Any, head_dim: int) -> Any:
        functional = self._torch.nn.functional
        batch, length, dim = hidden.shape

        def heads(name: str) -> Any:
            return functional.linear(hidden, *layer[name]).view(batch, length, self.heads, head_dim).transpose(1, 2)

        query, key, value = heads("attention.self.query"), heads("attention.self.key"), heads("attention.self.value")
        context = functional.scaled_dot_product_attention(query, key, value, attn_mask=bias)
        context = context.transpose(1, 2).reshape(batch, length, dim)
        attended = functional.layer_norm(
            functional.linear(context, *layer["attention.output.dense"]) + hidden,
            (dim,), *layer["attention.output.LayerNorm"], self.eps,
        )  # fmt: skip
        inner = functional.gelu(functional.linear(attended, *layer["intermediate.dense"]))
        return functional.layer_norm(
            functional.linear(inner, *layer["output.dense"]) + attended, (dim,), *layer["output.LayerNorm"], self.eps
        )
