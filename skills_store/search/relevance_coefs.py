"""Fitted relevance coefficients: written by `python -m bench.relevance --fit` (do not edit by hand).

See `skills_store.search.relevance` for the features and docs/benchmarks/relevance.md for the figures.
"""

HYBRID: dict[str, object] = {
    "weights": {
        "error_query": -1.2131,
        "signature": 2.1945,
        "type_match": -0.0413,
        "type_other": -1.2814,
        "template": 1.513,
        "quoted": 0.781,
        "cosine": 0.816,
        "cosine_margin": 0.8797,
        "type_cosine": -0.2877,
        "bm25": 0.8429,
        "bm25_margin": 0.355,
        "vector_rr": 1.6353,
        "keyword_rr": 1.1998,
        "fused": 0.1766,
    },
    "bias": -6.1172,
}

KEYWORD: dict[str, object] = {
    "weights": {
        "error_query": -1.2296,
        "signature": 2.2459,
        "type_match": -0.3511,
        "type_other": -1.2962,
        "template": 1.3867,
        "quoted": 1.074,
        "bm25": 1.6483,
        "bm25_margin": 1.0916,
        "keyword_rr": 1.4522,
    },
    "bias": -7.0105,
}

THRESHOLD = 0.51
"""Suggestion threshold on the relevance (`SKILLBANK_SUGGEST_THRESHOLD`), chosen on the train split."""
