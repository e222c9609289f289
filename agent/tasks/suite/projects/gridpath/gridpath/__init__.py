"""Grids parsed from text maps, and searches over them."""

from gridpath.grid import Grid
from gridpath.search import flood_fill, regions, shortest_path

__all__ = ["Grid", "flood_fill", "regions", "shortest_path"]
