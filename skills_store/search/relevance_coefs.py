"""Fitted relevance coefficients: written by `python -m bench.relevance --fit` (do not edit by hand).

See `skills_store.search.relevance` for the features and docs/benchmarks/relevance.md for the figures.
"""

HYBRID: dict[str, object] = {
    "weights": {
        'error_query': -1.4029,
        'signature': 2.429,
        'type_match': -0.3179,
        'type_other': -1.5909,
        'template': 2.0545,
        'quoted': 0.9872,
        'cosine': 0.9335,
        'cosine_margin': 1.4061,
        'type_cosine': -0.4355,
        'bm25': 0.635,
        'bm25_margin': 0.508,
        'vector_rr': 1.8149,
        'keyword_rr': 1.1665,
        'fused': 0.2652,
    },
    "bias": -5.5017,
}

KEYWORD: dict[str, object] = {
    "weights": {
        'error_query': -1.3782,
        'signature': 2.3959,
        'type_match': -0.7611,
        'type_other': -1.7206,
        'template': 1.9307,
        'quoted': 1.3463,
        'bm25': 1.7186,
        'bm25_margin': 1.099,
        'keyword_rr': 1.6972,
    },
    "bias": -7.0047,
}

THRESHOLD = 0.66
"""Suggestion threshold on the relevance (`SKILLBANK_SUGGEST_THRESHOLD`), chosen on the train split."""
