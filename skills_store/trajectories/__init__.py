"""Trajectories: what an agent session did, stored in SQLite, closed with an outcome, exported for training.

`store` is the SQLite store (WAL, group commit through `writer`; tables and migrations in `schema`), `closing`
closes a session that ended without `final=true` with an inferred outcome, `trl_export` turns closed trajectories
into TRL-style prompt/completion lines.
"""
