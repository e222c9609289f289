"""Distillation: closed trajectories -> skill drafts (heuristic or LLM) -> merged into the bank; outcomes -> confidence.

Modules: `signature` (error signatures), `episodes` (test runs, edits, fix episodes), `changes` (what a diff
changed), `heuristic` and `llm` (the distillers), `merge` (one skill per lesson), `outcomes` (confidence from
closed trajectories), `runner` (one pass over pending trajectories). Nothing is imported here.
"""
