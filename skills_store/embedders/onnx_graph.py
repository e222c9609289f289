"""A BERT encoder as an ONNX graph, written straight to protobuf bytes for onnxruntime.

onnxruntime runs a short query through MiniLM in about half the time torch's eager mode takes on this CPU (its
graph optimizer fuses each layer's bias, GELU and residual layer norms, and it has no per-operator Python
dispatch); see `bench/embedder_runtime.py`. The graph is built here from the checkpoint's own weights each time
the model loads (~0.1 s), so nothing is exported, downloaded or cached on disk, and neither torch nor the `onnx`
package is needed: the few protobuf messages a model file uses are written by `_Message` below (field numbers
from onnx/onnx.proto, IR version 8, default opset 17, and version 1 of `com.microsoft` for the 8-bit form).

The graph computes what `bert.BertEncoder` computes, operator for operator: word + position + token-type
embeddings and their layer norm, then per layer self-attention (queries scaled by 1/sqrt(head size), the
attention mask added as a bias), the output projection with its residual layer norm, the exact (erf) GELU
feed-forward and its residual layer norm. Its inputs are `input_ids`, `position_ids`, `token_type_ids` (int64,
batch x length) and `mask_bias` (float32, batch x 1 x 1 x length: 0 for a token, the dtype's lowest value for
padding); its output is `hidden` (float32, batch x length x hidden size).

With `int8`, each weight matrix (36 in MiniLM's 6 layers) is stored as 8-bit integers with one scale per output
column (`quantize_columns`) and multiplied by onnxruntime's `DynamicQuantizeMatMul`, which quantizes its input per
call (unsigned 8 bits, one scale and zero point for the whole tensor) and runs an integer product. A short query
then reads 10.6 MB of weights instead of 42.4: about half the encode's time on this CPU, with vectors at cosine
~0.99 of the float ones (figures in `minilm.py` and `bench/embedder_runtime.py`).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from itertools import count
from typing import Any

import numpy as np

IR_VERSION = 8
OPSET = 17
_FLOAT, _INT8, _INT64 = 1, 3, 7  # TensorProto.DataType
_ATTR_FLOAT, _ATTR_INT, _ATTR_INTS = 1, 2, 7  # AttributeProto.AttributeType
_DTYPES = {np.dtype(np.float32): _FLOAT, np.dtype(np.int8): _INT8, np.dtype(np.int64): _INT64}
MICROSOFT = "com.microsoft"
#: The largest weight `quantize_columns` writes: 7 bits, not 8. On x86 CPUs without VNNI, onnxruntime multiplies
#: unsigned 8-bit inputs by signed 8-bit weights with an instruction that saturates a pair's 16-bit sum
#: (255 * 127 * 2 > 32767); with 63 it cannot (255 * 63 * 2 = 32130), on every CPU. It costs ~7e-4 of cosine
#: to the float vectors (0.9930 against 0.9937 on average over 120 queries).
WEIGHT_LIMIT = 63


class _Message:
    """One protobuf message being written: fields appended in any order, `bytes()` gives the encoding."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def varint(self, field: int, value: int) -> _Message:
        self.parts.append(_varint(field << 3) + _varint(value))
        return self

    def fixed32(self, field: int, value: float) -> _Message:
        self.parts.append(_varint(field << 3 | 5) + struct.pack("<f", value))
        return self

    def data(self, field: int, payload: bytes | str | _Message) -> _Message:
        if isinstance(payload, _Message):
            payload = bytes(payload)
        elif isinstance(payload, str):
            payload = payload.encode()
        self.parts.append(_varint(field << 3 | 2) + _varint(len(payload)) + payload)
        return self

    def packed(self, field: int, values: Sequence[int]) -> _Message:
        return self.data(field, b"".join(_varint(v) for v in values))

    def __bytes__(self) -> bytes:
        return b"".join(self.parts)


def _varint(value: int) -> bytes:
    """Protobuf's base-128 varint; a negative int64 is written as its 64-bit two's complement (10 bytes)."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if not value:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def _tensor_type(elem_type: int, shape: Sequence[int | str]) -> _Message:
    dims = _Message()
    for dim in shape:
        dims.data(1, _Message().data(2, dim) if isinstance(dim, str) else _Message().varint(1, dim))
    return _Message().data(1, _Message().varint(1, elem_type).data(2, dims))  # TypeProto.tensor_type


class GraphWriter:
    """Nodes, initializers, inputs and outputs of one ONNX graph; `model_bytes()` is a loadable ModelProto."""

    def __init__(self, name: str) -> None:
        self._graph = _Message().data(2, name)
        self._names = count()
        self._domains: set[str] = set()

    def input(self, name: str, dtype: np.dtype[Any] | type, shape: Sequence[int | str]) -> str:
        info = _Message().data(1, name).data(2, _tensor_type(_DTYPES[np.dtype(dtype)], shape))
        self._graph.data(11, info)
        return name

    def output(self, name: str, dtype: np.dtype[Any] | type, shape: Sequence[int | str]) -> None:
        info = _Message().data(1, name).data(2, _tensor_type(_DTYPES[np.dtype(dtype)], shape))
        self._graph.data(12, info)

    def constant(self, name: str, array: np.ndarray) -> str:
        """A named initializer holding `array` (float32, int8 or int64), written little-endian as raw data."""
        array = np.asarray(array)
        native = array.dtype.newbyteorder("=")
        if native not in _DTYPES:
            raise TypeError(f"initializer {name!r}: dtype {array.dtype} is not float32, int8 or int64")
        tensor = _Message().packed(1, array.shape).varint(2, _DTYPES[native]).data(8, name)
        tensor.data(9, np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes())
        self._graph.data(5, tensor)
        return name

    def node(
        self,
        op: str,
        inputs: Sequence[str],
        *,
        out: str | None = None,
        domain: str = "",
        **attrs: float | int | Sequence[int],
    ) -> str:
        """Adds `op` (of `domain`, the standard one by default) over `inputs`, where "" skips an optional input;
        returns the name of its one output (`out`, or a fresh name)."""
        output = out or f"{op.lower()}_{next(self._names)}"
        node = _Message()
        for name in inputs:
            node.data(1, name)
        node.data(2, output).data(3, output).data(4, op)
        if domain:
            node.data(7, domain)
            self._domains.add(domain)
        for key, value in attrs.items():
            attr = _Message().data(1, key)
            if isinstance(value, float):
                attr.fixed32(2, value).varint(20, _ATTR_FLOAT)
            elif isinstance(value, int):
                attr.varint(3, value).varint(20, _ATTR_INT)
            else:
                attr.packed(8, list(value)).varint(20, _ATTR_INTS)
            node.data(5, attr)
        self._graph.data(1, node)
        return output

    def model_bytes(self) -> bytes:
        model = _Message().varint(1, IR_VERSION).data(2, "skillbank").data(8, _Message().data(1, "").varint(2, OPSET))
        for domain in sorted(self._domains):
            model.data(8, _Message().data(1, domain).varint(2, 1))
        return bytes(model.data(7, self._graph))


def quantize_columns(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`matrix` (in, out) as int8 weights in [-WEIGHT_LIMIT, WEIGHT_LIMIT] and one float32 scale per output column
    (symmetric: a zero point of 0), so that `weights * scales` approximates it. An all-zero column gets scale 1."""
    matrix = np.asarray(matrix, dtype=np.float32)
    scales = np.abs(matrix).max(axis=0) / WEIGHT_LIMIT
    scales[scales == 0] = 1.0
    weights = np.clip(np.rint(matrix / scales), -WEIGHT_LIMIT, WEIGHT_LIMIT).astype(np.int8)
    return weights, scales.astype(np.float32)


def bert_graph(weights: Mapping[str, Any], layers: int, heads: int, eps: float, *, int8: bool = False) -> bytes:
    """The ModelProto bytes of a BERT encoder over `weights` (numpy arrays by their checkpoint names, without a
    `bert.` prefix, as `bert.check_weights` returns them); with `int8`, its weight matrices in 8 bits."""
    g = GraphWriter("bert_encoder")
    ids = g.input("input_ids", np.int64, ["batch", "length"])
    positions = g.input("position_ids", np.int64, ["batch", "length"])
    types = g.input("token_type_ids", np.int64, ["batch", "length"])
    mask_bias = g.input("mask_bias", np.float32, ["batch", 1, 1, "length"])
    word = np.asarray(weights["embeddings.word_embeddings.weight"], dtype=np.float32)
    dim = int(word.shape[1])
    head_dim = dim // heads
    g.output("hidden", np.float32, ["batch", "length", dim])

    def const(name: str) -> str:
        return g.constant(name, np.asarray(weights[name], dtype=np.float32))

    def linear(x: str, name: str) -> str:
        # MatMul takes (in, out): the checkpoint's (out, in) matrix is stored transposed.
        matrix = np.asarray(weights[f"{name}.weight"], dtype=np.float32).T
        if int8:
            quantized, scales = quantize_columns(matrix)
            inputs = [x, g.constant(f"{name}.weight_q", quantized), g.constant(f"{name}.weight_scale", scales)]
            return g.node("DynamicQuantizeMatMul", [*inputs, "", const(f"{name}.bias")], domain=MICROSOFT)
        return g.node("Add", [g.node("MatMul", [x, g.constant(f"{name}.weight_t", matrix)]), const(f"{name}.bias")])

    def layer_norm(x: str, name: str, out: str | None = None) -> str:
        return g.node("LayerNormalization", [x, const(f"{name}.weight"), const(f"{name}.bias")], out=out, epsilon=eps)

    embedded = g.node("Add", [
        g.node("Add", [g.node("Gather", [g.constant("embeddings.word_embeddings.weight", word), ids]),
                       g.node("Gather", [const("embeddings.position_embeddings.weight"), positions])]),
        g.node("Gather", [const("embeddings.token_type_embeddings.weight"), types]),
    ])  # fmt: skip
    hidden = layer_norm(embedded, "embeddings.LayerNorm")
    split = g.constant("split_heads", np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge = g.constant("merge_heads", np.array([0, 0, dim], dtype=np.int64))
    scale = g.constant("attention_scale", np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    half = g.constant("half", np.array(0.5, dtype=np.float32))
    one = g.constant("one", np.array(1.0, dtype=np.float32))
    sqrt2 = g.constant("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    if layers == 0:
        g.node("Identity", [hidden], out="hidden")
    for i in range(layers):
        prefix = f"encoder.layer.{i}."

        def heads_of(part: str, perm: list[int], x: str = hidden, prefix: str = prefix) -> str:
            return g.node("Transpose", [g.node("Reshape", [linear(x, prefix + part), split])], perm=perm)

        query = heads_of("attention.self.query", [0, 2, 1, 3])
        key = heads_of("attention.self.key", [0, 2, 3, 1])  # transposed for query @ key
        value = heads_of("attention.self.value", [0, 2, 1, 3])
        scores = g.node("Add", [g.node("Mul", [g.node("MatMul", [query, key]), scale]), mask_bias])
        context = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), value])
        context = g.node("Reshape", [g.node("Transpose", [context], perm=[0, 2, 1, 3]), merge])
        attended = g.node("Add", [linear(context, prefix + "attention.output.dense"), hidden])
        attended = layer_norm(attended, prefix + "attention.output.LayerNorm")
        inner = linear(attended, prefix + "intermediate.dense")
        erf = g.node("Erf", [g.node("Div", [inner, sqrt2])])
        gelu = g.node("Mul", [g.node("Mul", [inner, half]), g.node("Add", [erf, one])])
        out = "hidden" if i == layers - 1 else None
        hidden = layer_norm(
            g.node("Add", [linear(gelu, prefix + "output.dense"), attended]), prefix + "output.LayerNorm", out
        )
    return g.model_bytes()
