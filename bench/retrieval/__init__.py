"""Retrieval quality eval: broken snippets, their real tracebacks, descriptions and near-miss distractors.

`python -m bench.retrieval.build_evalset` regenerates `evalset.jsonl`; `python -m bench.retrieval` runs the benchmark.
"""
