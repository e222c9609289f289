"""MiniLM on onnxruntime: the protobuf writer, the BERT graph (full precision and 8-bit) against the torch encoder,
and the runtime choice."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skills_store.embedders.onnx_graph import WEIGHT_LIMIT, GraphWriter, _varint, quantize_columns
from skills_store.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"), (-1, b"\xff" * 9 + b"\x01")],
)
def test_varints_are_protobufs(value: int, encoded: bytes) -> None:
    assert _varint(value) == encoded


def test_a_written_graph_loads_and_computes_with_every_attribute_kind() -> None:
    """A float attribute (epsilon), a negative int (axis=-1), an int list (perm) and int64/float32 initializers."""
    import onnxruntime

    g = GraphWriter("check")
    x = g.input("x", np.float32, ["batch", 3])
    rows = g.input("rows", np.int64, ["n"])
    table = g.constant("table", np.arange(12, dtype=np.float32).reshape(4, 3))
    gathered = g.node("Gather", [table, rows])
    shifted = g.node("Add", [x, g.constant("shift", np.array([1.0, -2.0, 0.5], dtype=np.float32))])
    normed = g.node(
        "LayerNormalization",
        [shifted, g.constant("gamma", np.ones(3, np.float32)), g.constant("beta", np.zeros(3, np.float32))],
        epsilon=1e-3,
    )
    soft = g.node("Softmax", [normed], axis=-1)
    g.node("Transpose", [soft], out="t", perm=[1, 0])
    g.node("Identity", [gathered], out="g")
    g.output("t", np.float32, [3, "batch"])
    g.output("g", np.float32, ["n", 3])
    session = onnxruntime.InferenceSession(g.model_bytes(), providers=["CPUExecutionProvider"])
    feed_x = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.0]], dtype=np.float32)
    t, gathered_rows = session.run(["t", "g"], {"x": feed_x, "rows": np.array([3, 0], dtype=np.int64)})
    shifted_np = feed_x + np.array([1.0, -2.0, 0.5], dtype=np.float32)
    mean, var = shifted_np.mean(-1, keepdims=True), shifted_np.var(-1, keepdims=True)
    normed_np = (shifted_np - mean) / np.sqrt(var + 1e-3)
    soft_np = np.exp(normed_np) / np.exp(normed_np).sum(-1, keepdims=True)
    assert np.allclose(t, soft_np.T, atol=1e-6)
    assert np.array_equal(gathered_rows, np.arange(12, dtype=np.float32).reshape(4, 3)[[3, 0]])


def test_an_initializer_of_another_dtype_is_refused() -> None:
    with pytest.raises(TypeError, match="not float32, int8 or int64"):
        GraphWriter("x").constant("half", np.ones(2, dtype=np.float16))


def test_columns_are_quantized_symmetrically_in_seven_bits() -> None:
    """One scale per output column; every weight within half a step of its column's scale; a zero column exact."""
    rng = np.random.default_rng(7)
    matrix = rng.normal(0, 0.05, (384, 6)).astype(np.float32)
    matrix[:, 2] *= 40  # columns of very different ranges each get their own scale
    matrix[:, 4] = 0.0
    weights, scales = quantize_columns(matrix)
    assert weights.dtype == np.int8
    assert scales.dtype == np.float32
    assert weights.shape == matrix.shape
    assert scales.shape == (6,)
    assert np.abs(weights).max() == WEIGHT_LIMIT == 63
    assert np.all(np.abs(weights * scales - matrix) <= scales / 2 + 1e-7)
    assert scales[4] == 1.0
    assert not weights[:, 4].any()


def test_a_microsoft_operator_with_int8_weights_and_a_skipped_input_loads_and_computes() -> None:
    """The `com.microsoft` opset is declared only when a node uses it; "" skips an optional input (zero point)."""
    import onnxruntime

    plain = GraphWriter("plain")
    plain.input("x", np.float32, ["batch", 4])
    plain.node("Identity", ["x"], out="y")
    plain.output("y", np.float32, ["batch", 4])
    assert b"com.microsoft" not in plain.model_bytes()

    g = GraphWriter("q")
    x = g.input("x", np.float32, ["batch", 4])
    matrix = np.arange(-6, 6, dtype=np.float32).reshape(4, 3) / 4
    weights, scales = quantize_columns(matrix)
    bias = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    inputs = [x, g.constant("w", weights), g.constant("s", scales), "", g.constant("b", bias)]
    g.node("DynamicQuantizeMatMul", inputs, out="y", domain="com.microsoft")
    g.output("y", np.float32, ["batch", 3])
    session = onnxruntime.InferenceSession(g.model_bytes(), providers=["CPUExecutionProvider"])
    feed = np.array([[1.0, 0.0, -2.0, 0.25], [0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    (y,) = session.run(["y"], {"x": feed})
    assert np.abs(y - (feed @ matrix + bias)).max() < 0.05  # the input is quantized to 8 bits per call


def _tiny_bert(tmp_path: Path, layers: int, seed: int = 3) -> Path:
    """A random BERT checkpoint of hidden size 16 (2 heads) with the packaged tokenizer: not MiniLM's shape."""
    from safetensors.numpy import save_file

    from skills_store.embedders.minilm import packaged_model_path

    rng = np.random.default_rng(seed)
    dim, inner, vocab = 16, 24, 30522
    config = {"model_type": "bert", "hidden_size": dim, "num_attention_heads": 2, "num_hidden_layers": layers,
              "intermediate_size": inner, "vocab_size": vocab, "max_position_embeddings": 64, "layer_norm_eps": 1e-12,
              "pad_token_id": 0}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "tokenizer.json").symlink_to(packaged_model_path() / "tokenizer.json")

    def w(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.3, shape).astype(np.float32)

    tensors = {"embeddings.word_embeddings.weight": w(vocab, dim), "embeddings.position_embeddings.weight": w(64, dim),
               "embeddings.token_type_embeddings.weight": w(2, dim),
               "embeddings.LayerNorm.weight": 1 + w(dim), "embeddings.LayerNorm.bias": w(dim)}  # fmt: skip
    shapes = {"attention.self.query": (dim, dim), "attention.self.key": (dim, dim),
              "attention.self.value": (dim, dim), "attention.output.dense": (dim, dim),
              "intermediate.dense": (inner, dim), "output.dense": (dim, inner)}  # fmt: skip
    for i in range(layers):
        for part, shape in shapes.items():
            tensors[f"bert.encoder.layer.{i}.{part}.weight"] = w(*shape)
            tensors[f"bert.encoder.layer.{i}.{part}.bias"] = w(shape[0])
        for part in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[f"bert.encoder.layer.{i}.{part}.weight"] = 1 + w(dim)
            tensors[f"bert.encoder.layer.{i}.{part}.bias"] = w(dim)
    save_file(tensors, str(tmp_path / "model.safetensors"))
    return tmp_path


@pytest.mark.parametrize("layers", [0, 2])
def test_the_graph_computes_what_the_torch_encoder_computes_for_any_bert(tmp_path: Path, layers: int) -> None:
    """Another hidden size, head count, depth (none at all too) and a 64-token limit: nothing MiniLM-specific."""
    from skills_store.embedders.bert_ort import OrtBertEncoder
    from skills_store.embedders.minilm import _torch_pooled

    path = _tiny_bert(tmp_path, layers)
    texts = ["KeyError: 'qty'", "", "a long failure message that runs past the limit " * 12, "é 中文 🎉"]
    ours = OrtBertEncoder(path, 256).pooled(texts)
    reference = _torch_pooled(path, 256)(texts)
    assert ours.shape == (4, 16)
    assert ours.dtype == np.float32
    assert np.abs(ours - reference).max() < 1e-5
    eight_bit = OrtBertEncoder(path, 256, int8=True)
    quantized = eight_bit.pooled(texts)
    assert quantized.shape == (4, 16)
    assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)
    assert (quantized * reference).sum(axis=1).min() > 0.95  # random weights: a looser bound than MiniLM's 0.98
    # Each text is run alone: its batch mates and the padding never change its vector.
    assert np.array_equal(quantized, np.concatenate([eight_bit.pooled([text]) for text in texts]))


def test_the_default_runs_in_full_precision_where_the_8_bit_graph_does_not_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An onnxruntime built without its contrib operators (no `DynamicQuantizeMatMul`): `auto` falls back to full
    precision with a warning; `minilm:int8`, asked for by name, is refused."""
    from skills_store.embedders import bert_ort
    from skills_store.embedders.minilm import MiniLMEmbedder

    real = bert_ort.bert_graph

    def without_contrib_ops(*args: object, int8: bool = False) -> bytes:
        model = real(*args, int8=int8)  # type: ignore[arg-type]
        return model.replace(b"DynamicQuantizeMatMul", b"DynamicQuantizeMatMuX") if int8 else model

    monkeypatch.setattr(bert_ort, "bert_graph", without_contrib_ops)
    path = _tiny_bert(tmp_path, 1)
    with caplog.at_level("WARNING"):
        fallback = MiniLMEmbedder(path, runtime="auto")
    assert fallback.runtime == "onnxruntime"
    assert "MiniLM's 8-bit graph does not load" in caplog.text
    assert fallback._pooled(["KeyError: 'qty'"]).shape == (1, 16)  # the tiny model's width, not MiniLM's
    with pytest.raises(ConfigError, match="onnxruntime cannot load the BERT graph"):
        MiniLMEmbedder(path, runtime="int8")


def test_an_incomplete_checkpoint_is_refused_by_the_onnxruntime_encoder_too(tmp_path: Path) -> None:
    from safetensors.numpy import load_file, save_file

    from skills_store.embedders.bert_ort import OrtBertEncoder

    path = _tiny_bert(tmp_path, 2)
    tensors = load_file(str(path / "model.safetensors"))
    del tensors["bert.encoder.layer.1.output.dense.bias"]
    save_file(tensors, str(path / "model.safetensors"))
    with pytest.raises(ConfigError, match=r"lacks 1 tensor\(s\), e.g. encoder.layer.1.output.dense.bias"):
        OrtBertEncoder(path, 256)


def test_bert_graph_bytes_do_not_depend_on_the_arrays_memory_layout() -> None:
    """A transposed (non-contiguous) or big-endian array is written as the same little-endian numbers."""
    a = GraphWriter("a")
    a.constant("m", np.arange(6, dtype=np.float32).reshape(2, 3).T)
    b = GraphWriter("a")
    b.constant("m", np.ascontiguousarray(np.arange(6, dtype=">f4").reshape(2, 3).T))
    assert a.model_bytes() == b.model_bytes()


def test_an_unknown_runtime_is_refused() -> None:
    from skills_store.embedders.minilm import MiniLMEmbedder

    with pytest.raises(ConfigError, match="unknown MiniLM runtime 'tf'"):
        MiniLMEmbedder(runtime="tf")


def test_without_onnxruntime_minilm_runs_on_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    from skills_store.embedders import minilm

    real = importlib.util.find_spec
    monkeypatch.setattr(minilm.importlib.util, "find_spec", lambda name: None if name == "onnxruntime" else real(name))
    assert minilm.MiniLMEmbedder().runtime == "torch"


@pytest.mark.minilm
@pytest.mark.slow
class TestMiniLMRuntimes:
    def test_both_runtimes_and_sentence_transformers_give_the_same_vectors(self) -> None:
        from skills_store.embedders.minilm import MiniLMEmbedder, packaged_model_path
        from skills_store.embedders.st import SentenceTransformerEmbedder

        texts = [
            "ModuleNotFoundError: No module named 'yaml'",
            "",
            "é 中文 🎉",
            "the tests hang when the event loop closes " * 60,
        ]  # fmt: skip (the last is cut at 256 tokens)
        onnx = MiniLMEmbedder(runtime="onnxruntime")
        assert onnx.runtime == "onnxruntime"
        default = MiniLMEmbedder()
        assert default.runtime == "int8"
        reference = SentenceTransformerEmbedder(str(packaged_model_path())).embed(texts)
        torch_vectors = MiniLMEmbedder(runtime="torch").embed(texts)
        ours = onnx.embed(texts)
        assert np.abs(ours - torch_vectors).max() < 1e-5
        assert np.abs(ours - reference).max() < 1e-4
        assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
        quantized = default.embed(texts)
        assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)
        cosines = (quantized * reference).sum(axis=1)
        assert cosines.min() > 0.97  # the empty text (0.973): two tokens, no content to average out the error
        assert np.delete(cosines, 1).min() > 0.98

    def test_int8_vectors_rank_the_eval_set_as_the_full_precision_ones_do(self) -> None:
        """Each eval-set query's nearest skill document by cosine alone (no keyword side): the 8-bit vectors
        (documents and queries) find the same one for most queries (96 of 106 when written; the others are near
        ties) and the expected skill about as often (71 against 73; through the bank, hybrid MRR 0.892 against
        0.898, vector-only 0.760 against 0.748)."""
        from bench.retrieval.evaluate import eval_corpus, load_evalset
        from skills_store.embedders.minilm import MiniLMEmbedder

        skills = eval_corpus()
        queries = load_evalset()
        ids = [s.skill_id for s in skills]
        found = {}
        for runtime in ("onnxruntime", "int8"):
            embedder = MiniLMEmbedder(runtime=runtime)
            scores = embedder.embed([q.query for q in queries]) @ embedder.embed([s.document() for s in skills]).T
            found[runtime] = [ids[i] for i in scores.argmax(axis=1)]
        same = sum(a == b for a, b in zip(found["onnxruntime"], found["int8"], strict=True))
        assert same >= 0.85 * len(queries)
        right = {r: sum(f == q.expected for f, q in zip(found[r], queries, strict=True)) for r in found}
        assert right["int8"] >= right["onnxruntime"] - 5

    def test_the_default_runtime_never_imports_torch(self) -> None:
        """What the embedder worker saves: torch's import (~1 s and ~200 MB) before the first search."""
        code = (
            "import sys; from skills_store.embedders.minilm import MiniLMEmbedder; e = MiniLMEmbedder();"
            "e.embed(['x'] * 20); print(e.runtime, 'torch' in sys.modules)"
        )
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
        assert done.stdout.split() == ["int8", "False"]

    def test_the_worker_runs_either_runtime_by_spec(self) -> None:
        from skills_store.embedders.worker import WorkerEmbedder

        texts = ["AttributeError: 'NoneType' object has no attribute 'x'"]
        vectors = []
        for spec in ("minilm:onnxruntime", "minilm:torch", "minilm:int8"):
            worker = WorkerEmbedder(spec)
            try:
                assert (worker.name, worker.dim) == ("all-MiniLM-L6-v2", 384)
                vectors.append(worker.embed(texts))
            finally:
                worker.close()
        assert np.abs(vectors[0] - vectors[1]).max() < 1e-5
        assert float(vectors[2][0] @ vectors[0][0]) > 0.98


def test_lone_surrogates_are_embedded_as_the_replacement_character(tmp_path: Path) -> None:
    """A command-line query's undecodable byte (`caf\\xe9` arrives as `caf\\udce9`) or a JSON `\\ud800` escape:
    the tokenizers take no lone surrogate, so both runtimes embed U+FFFD in its place instead of raising."""
    from skills_store.embedders.bert import tokenizable
    from skills_store.embedders.bert_ort import OrtBertEncoder
    from skills_store.embedders.minilm import _torch_pooled

    assert tokenizable(["caf\udce9", "a\ud800b", "plain", "\U0001f389"]) == [
        "caf\ufffd",
        "a\ufffdb",
        "plain",
        "\U0001f389",
    ]
    path = _tiny_bert(tmp_path, 1)
    for pooled in (OrtBertEncoder(path, 256).pooled, _torch_pooled(path, 256)):
        got = pooled(["caf\udce9", "KeyError \ud800 qty"])
        assert np.abs(got - pooled(["caf\ufffd", "KeyError \ufffd qty"])).max() < 1e-6


def test_the_onnxruntime_pool_follows_the_cgroup_cpu_quota(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A container granted one CPU (cgroup v2 `cpu.max`) on a machine of more gets a one-thread pool."""
    from skills_store import cores
    from skills_store.embedders.bert_ort import OrtBertEncoder

    quota = tmp_path / "cpu.max"
    quota.write_text("100000 100000\n")
    monkeypatch.setattr(cores, "CPU_MAX", quota)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert cores.usable_cores() == 1
    (tmp_path / "model").mkdir()
    encoder = OrtBertEncoder(_tiny_bert(tmp_path / "model", 1), 256)
    assert encoder._session.get_session_options().intra_op_num_threads == 1
    quota.write_text("max 100000\n")
    assert cores.usable_cores() == 4


def _broken_onnxruntime(tmp_path: Path) -> dict[str, str]:
    """An environment where onnxruntime is installed but does not import (a missing shared library)."""
    shim = tmp_path / "shim" / "onnxruntime"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text('raise ImportError("libonnxruntime.so.1: cannot open shared object file")\n')
    return {**os.environ, "PYTHONPATH": str(tmp_path / "shim")}


@pytest.mark.minilm
@pytest.mark.slow
def test_an_onnxruntime_that_does_not_import_makes_minilm_run_on_torch(tmp_path: Path) -> None:
    code = "from skills_store.embedders.minilm import MiniLMEmbedder; print(MiniLMEmbedder().runtime)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=_broken_onnxruntime(tmp_path), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "torch"
    assert "onnxruntime does not import (ImportError: libonnxruntime.so.1" in done.stderr


def test_minilm_onnxruntime_that_does_not_import_is_a_config_error_naming_the_way_out(tmp_path: Path) -> None:
    code = (
        "from skills_store.embedders.minilm import MiniLMEmbedder\n"
        "from skills_store.errors import ConfigError\n"
        "try:\n    MiniLMEmbedder(runtime='onnxruntime')\nexcept ConfigError as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=_broken_onnxruntime(tmp_path), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "onnxruntime cannot be imported (ImportError: libonnxruntime.so.1" in done.stdout
    assert "SKILLBANK_EMBEDDER=minilm:torch" in done.stdout


def test_minilm_onnxruntime_without_onnxruntime_installed_is_an_invalid_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pydantic import ValidationError

    from mcp_server import settings

    real = importlib.util.find_spec
    monkeypatch.setattr(
        settings.importlib.util, "find_spec", lambda name: None if name == "onnxruntime" else real(name)
    )
    for spec in ("minilm:onnxruntime", "minilm:int8"):
        with pytest.raises(ValidationError, match="onnxruntime is not installed"):
            settings.Settings(embedder=spec)
    assert settings.Settings(embedder="minilm:torch").embedder == "minilm:torch"
