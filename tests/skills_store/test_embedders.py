"""Embedders: the hash stand-in, the query cache, and the real packaged MiniLM model."""

from __future__ import annotations

import numpy as np
import pytest

from skills_store.embedders import CachedEmbedder, make_embedder
from skills_store.embedders.hashing import HashEmbedder
from skills_store.errors import ConfigError


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
        ours = minilm.embed(texts)
        assert ours.shape == (2, 384)
        assert np.abs(ours - reference).max() < 1e-4

    def test_similar_problems_are_closer_than_unrelated_ones(self, minilm) -> None:
        v = minilm.embed(
            [
                "ModuleNotFoundError: No module named 'requests'",
                "Python cannot find the package I installed with pip",
                "ZeroDivisionError: division by zero",
            ]
        )
        assert float(v[0] @ v[1]) > float(v[0] @ v[2])
