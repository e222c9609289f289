"""Embedders: the hash stand-in, the query cache, the worker process, and the real packaged MiniLM model."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import numpy as np
import pytest

from skills_store.embedders import CachedEmbedder, make_embedder
from skills_store.embedders.hashing import HashEmbedder
from skills_store.embedders.worker import EmbedderWorkerError, WorkerEmbedder
from skills_store.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_hash_embedder_is_deterministic_and_normalised() -> None:
    a = HashEmbedder().embed(["KeyError: 'x'", ""])
    b = HashEmbedder().embed(["KeyError: 'x'", ""])
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)


def test_cache_returns_the_same_vectors_and_counts_hits() -> None:
    cached = CachedEmbedder(HashEmbedder(), maxsize=2)
    first = cached.embed(["a b", "c d"])
    again = cached.embed(["c d", "a b"])
    assert np.array_equal(first[::-1], again)
    assert (cached.hits, cached.misses) == (2, 2)
    cached.embed(["e f"])  # evicts "c d", the least recently used
    cached.embed(["c d"])
    assert cached.misses == 4


def test_a_checkpoint_that_is_not_a_complete_bert_is_refused_with_what_it_lacks(tmp_path: Path) -> None:
    from skills_store.embedders.bert import BertEncoder
    from skills_store.embedders.minilm import packaged_model_path

    (tmp_path / "config.json").write_text('{"model_type": "roberta", "num_attention_heads": 12}')
    with pytest.raises(ConfigError, match="not a BERT model"):
        BertEncoder(tmp_path, 256)
    packaged = packaged_model_path()
    config = (packaged / "config.json").read_text()
    (tmp_path / "config.json").write_text(config.replace('"num_hidden_layers": 6', '"num_hidden_layers": 7'))
    (tmp_path / "model.safetensors").symlink_to(packaged / "model.safetensors")
    with pytest.raises(ConfigError, match=r"lacks 16 tensor\(s\), e.g. encoder.layer.6"):
        BertEncoder(tmp_path, 256)


def test_unknown_embedder_spec_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown embedder 'bert'"):
        make_embedder("bert")


@pytest.fixture(scope="module")
def minilm():
    return make_embedder("minilm")


@pytest.mark.minilm
@pytest.mark.slow
class TestPackagedMiniLM:
    def test_vectors_match_sentence_transformers_exactly(self, minilm) -> None:
        from skills_store.embedders.minilm import packaged_model_path
        from skills_store.embedders.st import SentenceTransformerEmbedder

        texts = ["ModuleNotFoundError: No module named 'yaml'", "the tests hang when the event loop closes " * 20]
        reference = SentenceTransformerEmbedder(str(packaged_model_path())).embed(texts)
        ours = make_embedder("minilm:onnxruntime").embed(texts)
        assert ours.shape == (2, 384)
        assert np.abs(ours - reference).max() < 1e-4
        quantized = minilm.embed(texts)  # the default, 8-bit weights: near, not equal
        assert quantized.shape == (2, 384)
        assert (quantized * reference).sum(axis=1).min() > 0.98

    def test_a_batch_of_mixed_lengths_pools_only_each_texts_own_tokens(self, minilm) -> None:
        """Padding to the batch's longest text must not change a short text's vector (the attention mask works; the
        8-bit default encodes each text alone, its input's quantization scale its own)."""
        short = "KeyError: 'qty'"
        for embedder in (minilm, make_embedder("minilm:onnxruntime")):  # 8 bits, and full precision's padded batch
            alone = embedder.embed([short])
            batched = embedder.embed([short, "a long failure message that pads the batch " * 30])
            assert np.abs(alone[0] - batched[0]).max() < 1e-5

    def test_the_model_runs_without_importing_transformers(self) -> None:
        """The embedder worker's memory: transformers' BERT code costs ~130 MB that plain torch does not need."""
        code = (
            "import sys; from skills_store.embedders.minilm import MiniLMEmbedder; MiniLMEmbedder().embed(['x']);"
            "print('transformers' in sys.modules)"
        )
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
        assert done.stdout.strip() == "False"

    def test_similar_problems_are_closer_than_unrelated_ones(self, minilm) -> None:
        v = minilm.embed(
            [
                "ModuleNotFoundError: No module named 'requests'",
                "Python cannot find the package I installed with pip",
                "ZeroDivisionError: division by zero",
            ]
        )
        assert float(v[0] @ v[1]) > float(v[0] @ v[2])

    def test_the_worker_process_gives_the_vectors_of_the_model_in_process(self, minilm) -> None:
        texts = ["ModuleNotFoundError: No module named 'yaml'", "AttributeError: 'NoneType' object has no attribute"]
        worker = WorkerEmbedder("minilm")
        try:
            assert (worker.name, worker.dim) == (minilm.name, minilm.dim)
            assert np.abs(worker.embed(texts) - minilm.embed(texts)).max() < 1e-6
        finally:
            worker.close()


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def hash_worker():
    worker = WorkerEmbedder("hash")
    yield worker
    worker.close()


def test_a_worker_returns_the_vectors_the_embedder_computes_in_process(hash_worker) -> None:
    texts = ["KeyError: 'x'", "ünïcode ✓ text", ""]
    assert (hash_worker.name, hash_worker.dim) == ("hash", 384)
    vectors = hash_worker.embed(texts)
    assert np.array_equal(vectors, HashEmbedder().embed(texts))
    assert vectors.dtype == np.float32
    assert vectors.flags.writeable
    assert hash_worker.embed([]).shape == (0, 384)


def test_a_worker_that_died_is_replaced_by_the_next_embed(hash_worker) -> None:
    first = hash_worker.pid
    hash_worker.embed(["warm"])
    os.kill(first, signal.SIGKILL)
    assert np.array_equal(hash_worker.embed(["again"]), HashEmbedder().embed(["again"]))
    assert hash_worker.pid != first


def test_work_given_to_embed_during_runs_once_while_the_worker_encodes(hash_worker) -> None:
    calls: list[int | None] = []

    def work() -> str:
        calls.append(hash_worker.pid)
        return "keyword hits"

    vectors, result = hash_worker.embed_during(["KeyError: 'x'"], work)
    assert result == "keyword hits"
    assert calls == [hash_worker.pid]
    assert np.array_equal(vectors, HashEmbedder().embed(["KeyError: 'x'"]))
    assert hash_worker.embed_during([], lambda: 7)[1] == 7


def test_an_error_in_the_work_is_raised_and_the_next_request_gets_its_own_answer(hash_worker) -> None:
    def work() -> None:
        raise RuntimeError("the keyword index is gone")

    with pytest.raises(RuntimeError, match="keyword index"):
        hash_worker.embed_during(["first"], work)
    assert np.array_equal(hash_worker.embed(["second"]), HashEmbedder().embed(["second"]))


def test_embed_during_survives_a_dead_worker_and_runs_the_work_once(hash_worker) -> None:
    hash_worker.embed(["warm"])
    os.kill(hash_worker.pid, signal.SIGKILL)
    calls: list[int] = []
    vectors, _ = hash_worker.embed_during(["after"], lambda: calls.append(1))
    assert calls == [1]
    assert np.array_equal(vectors, HashEmbedder().embed(["after"]))


def test_the_cache_runs_the_work_during_a_miss_and_after_a_hit() -> None:
    class During(HashEmbedder):
        requests = 0

        def embed_during(self, texts, work):
            During.requests += 1
            return self.embed(texts), work()

    cached = CachedEmbedder(During())
    vec, hits = cached.embed_during(["a b"], lambda: ["hit"])
    assert (hits, During.requests, cached.misses) == (["hit"], 1, 1)
    again, hits = cached.embed_during(["a b"], lambda: ["again"])
    assert (hits, During.requests, cached.hits) == (["again"], 1, 1)  # answered by the cache
    assert np.array_equal(vec, again)
    plain, hits = CachedEmbedder(HashEmbedder()).embed_during(["c"], lambda: "in turn")  # no worker: one by one
    assert hits == "in turn"
    assert np.array_equal(plain, HashEmbedder().embed(["c"]))


def test_closing_a_worker_reaps_its_process(hash_worker) -> None:
    pid = hash_worker.pid
    hash_worker.embed(["x"])
    hash_worker.close()
    assert not Path(f"/proc/{pid}").exists()
    with pytest.raises(EmbedderWorkerError, match="closed"):
        hash_worker.embed(["y"])


def test_a_model_the_worker_cannot_load_is_a_config_error_and_leaves_no_process() -> None:
    before = set(_children())
    with pytest.raises(ConfigError, match=r"could not load.*hash dimension must be an integer"):
        WorkerEmbedder("hash:wide")
    assert set(_children()) <= before


def test_an_unknown_spec_is_refused_before_anything_is_spawned() -> None:
    with pytest.raises(ConfigError, match="unknown embedder 'bert'"):
        make_embedder("bert", isolated=True)


def test_isolated_models_run_in_a_worker_and_the_hash_embedder_stays_in_process() -> None:
    assert isinstance(make_embedder("hash", isolated=True).inner, HashEmbedder)  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_a_worker_leaves_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = "from skills_store.embedders.worker import WorkerEmbedder\nw = WorkerEmbedder('hash')\n"
    script += "w.embed(['x'])\nprint(w.pid, flush=True)\ninput()\n"
    with subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
    ) as parent:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        assert _running(worker)
        parent.kill()
        parent.wait()
        with anyio.fail_after(5):  # the pipe from the dead parent closes: the worker exits by itself
            while _running(worker):
                await anyio.sleep(0.01)


def _children() -> list[int]:
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == me:
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return [p for p in found if _running(p)]
