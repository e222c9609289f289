"""Trajectories: what an agent session did, stored in SQLite, closed with an outcome, exported for training.

`store` is the SQLite store (WAL, group commit through `writer`), `trl_export` turns closed trajectories into
TRL-style prompt/completion lines.
"""
