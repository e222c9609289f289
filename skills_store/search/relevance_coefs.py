"""Fitted relevance coefficients: written by `python -m bench.relevance --fit` (do not edit by hand).

See `skills_store.search.relevance` for the features and docs/benchmarks/relevance.md for the figures.
"""

HYBRID: dict[str, object] = {
    "weights": {
        "error_query": -1.4053,
        "signature": 2.433,
        "type_match": -0.3188,
        "type_other": -1.5907,
        "template": 2.0495,
        "quoted": 0.9893,
        "cosine": 0.9293,
        "cosine_margin": 1.4104,
        "type_cosine": -0.4356,
        "bm25": 0.6416,
        "bm25_margin": 0.5008,
        "vector_rr": 1.8155,
        "keyword_rr": 1.169,
        "fused": 0.2671,
    },
    "bias": -5.5187,
}

KEYWORD: dict[str, object] = {
    "weights": {
        "error_query": -1.3792,
        "signature": 2.4006,
        "type_match": -0.7627,
        "type_other": -1.7202,
        "template": 1.9227,
        "quoted": 1.3475,
        "bm25": 1.7272,
        "bm25_margin": 1.0871,
        "keyword_rr": 1.7042,
    },
    "bias": -7.0293,
}

THRESHOLD = 0.66
"""Suggestion threshold on the relevance (`SKILLBANK_SUGGEST_THRESHOLD`), chosen on the train split."""
