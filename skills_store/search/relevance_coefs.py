"""Fitted relevance coefficients: written by `python -m bench.relevance --fit` (do not edit by hand).

See `skills_store.search.relevance` for the features and docs/benchmarks/relevance.md for the figures.
"""

HYBRID: dict[str, object] = {
    "weights": {
        "error_query": -1.2407,
        "type_match": 0.1793,
        "type_other": -1.4195,
        "template": 3.0149,
        "quoted": 0.9763,
        "cosine": 0.81,
        "cosine_margin": 0.7769,
        "type_cosine": -0.6281,
        "bm25": 0.4686,
        "bm25_margin": 0.4975,
        "vector_rr": 1.5045,
        "keyword_rr": 1.2882,
        "fused": 0.2109,
    },
    "bias": -5.2804,
}

KEYWORD: dict[str, object] = {
    "weights": {
        "error_query": -1.3351,
        "type_match": -0.2042,
        "type_other": -1.4366,
        "template": 2.851,
        "quoted": 1.276,
        "bm25": 1.2088,
        "bm25_margin": 1.0523,
        "keyword_rr": 1.5785,
    },
    "bias": -6.0341,
}

THRESHOLD = 0.58
"""Suggestion threshold on the relevance (`SKILLBANK_SUGGEST_THRESHOLD`), chosen on the train split."""
