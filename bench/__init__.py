"""Benchmarks. Each module is runnable on its own (`python -m bench.<name>`); `python -m bench` runs them all.

Every benchmark measures a ratio against a named baseline in the same run and writes its figures to
`docs/benchmarks/<name>.md`.
"""
