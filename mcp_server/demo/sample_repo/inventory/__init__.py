"""A tiny inventory package: the sample repository of `skillbank demo`."""
