"""Skill search, in one place: query analysis, the keyword (FTS5) side, the vector side, filters and fusion.

`skills_store.catalog` only stores skills; everything that decides which skills answer a query lives here.
"""
