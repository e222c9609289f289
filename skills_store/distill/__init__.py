"""Distillation: closed trajectories -> skill drafts (heuristic or LLM) -> merged into the bank; outcomes -> confidence.

Modules: `names` (which names are the user's own), `signature` (error signatures that keep the library's names),
`episodes` (test runs, edits, fix episodes), `changes` (what a diff changed), `span` and `rules` (the edit rule a
patch makes), `lesson` (a lesson's key, tag and strategy text), `heuristic` and `llm` with `llm_lessons` (the
distillers), `screen` (refusing poisoned drafts), `merge` (one skill per lesson), `credit` and `outcomes`
(confidence from the sessions that used a skill), `runner` (one pass over pending trajectories). Nothing is
imported here.
"""
