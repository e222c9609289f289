"""Fitted relevance coefficients: written by `python -m bench.relevance --fit` (do not edit by hand).

See `skills_store.search.relevance` for the features and docs/benchmarks/relevance.md for the figures.
"""

HYBRID: dict[str, object] = {
    "weights": {
        "error_query": -1.282,
        "signature": 4.8952,
        "type_match": -0.2896,
        "type_other": -1.551,
        "template": 0.799,
        "quoted": 0.6675,
        "rule": -0.0863,
        "cosine": 1.0712,
        "cosine_margin": 1.3869,
        "type_cosine": -0.4103,
        "bm25": 0.5681,
        "bm25_margin": 0.3361,
        "vector_rr": 1.6427,
        "keyword_rr": 1.3295,
        "fused": 0.28,
    },
    "bias": -5.4145,
}

KEYWORD: dict[str, object] = {
    "weights": {
        "error_query": -1.2406,
        "signature": 4.9262,
        "type_match": -0.8181,
        "type_other": -1.484,
        "template": 0.7137,
        "quoted": 0.8393,
        "rule": -0.0193,
        "bm25": 1.634,
        "bm25_margin": 0.8015,
        "keyword_rr": 1.7877,
    },
    "bias": -6.8367,
}

THRESHOLD = 0.64
"""Suggestion threshold on the relevance (`SKILLBANK_SUGGEST_THRESHOLD`), chosen on the train split."""
