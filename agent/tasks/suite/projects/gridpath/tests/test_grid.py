import pytest

from gridpath import Grid

MAP = """
S..#
.#..
...G
"""


def test_parse_reads_rows_and_size():
    grid = Grid.parse(MAP)
    assert (grid.height, grid.width) == (3, 4)
    assert grid[(0, 0)] == "S"


def test_ragged_rows_are_refused():
    with pytest.raises(ValueError, match="same width"):
        Grid(["abc", "ab"])


def test_empty_grid_is_refused():
    with pytest.raises(ValueError, match="at least one row"):
        Grid([])


def test_in_bounds_edges():
    grid = Grid.parse(MAP)
    assert grid.in_bounds((2, 3))
    assert not grid.in_bounds((3, 0))
    assert not grid.in_bounds((0, -1))


def test_walls_are_not_passable():
    grid = Grid.parse(MAP)
    assert not grid.passable((0, 3))
    assert grid.passable((0, 2))


def test_neighbours_orthogonal():
    grid = Grid.parse(MAP)
    assert sorted(grid.neighbours((0, 0))) == [(0, 1), (1, 0)]


def test_neighbours_diagonal():
    grid = Grid.parse(MAP)
    assert (1, 2) in grid.neighbours((0, 1), diagonal=True)
    assert (1, 2) not in grid.neighbours((0, 1))


def test_find():
    grid = Grid.parse(MAP)
    assert grid.find("G") == (2, 3)
    with pytest.raises(KeyError):
        grid.find("X")
