from gridpath import Grid, flood_fill, regions, shortest_path

MAP = """
S..#
.#..
...G
"""

ISLANDS = """
..#..
..#..
#####
.#...
"""


def test_shortest_path_length_and_ends():
    grid = Grid.parse(MAP)
    path = shortest_path(grid, grid.find("S"), grid.find("G"))
    assert path[0] == (0, 0)
    assert path[-1] == (2, 3)
    assert len(path) == 6


def test_shortest_path_steps_are_adjacent():
    grid = Grid.parse(MAP)
    path = shortest_path(grid, (0, 0), (2, 3))
    for (r1, c1), (r2, c2) in zip(path, path[1:]):
        assert abs(r1 - r2) + abs(c1 - c2) == 1


def test_diagonal_path_is_shorter():
    grid = Grid.parse(MAP)
    assert len(shortest_path(grid, (0, 0), (2, 3), diagonal=True)) == 4


def test_path_to_itself():
    grid = Grid.parse(MAP)
    assert shortest_path(grid, (1, 0), (1, 0)) == [(1, 0)]


def test_unreachable_goal():
    grid = Grid.parse(ISLANDS)
    assert shortest_path(grid, (0, 0), (0, 4)) is None


def test_path_into_a_wall():
    grid = Grid.parse(MAP)
    assert shortest_path(grid, (0, 0), (0, 3)) is None


def test_flood_fill_stays_in_its_region():
    grid = Grid.parse(ISLANDS)
    assert flood_fill(grid, (0, 0)) == {(0, 0), (0, 1), (1, 0), (1, 1)}


def test_flood_fill_from_a_wall_is_empty():
    assert flood_fill(Grid.parse(ISLANDS), (2, 0)) == set()


def test_regions_largest_first():
    sizes = [len(r) for r in regions(Grid.parse(ISLANDS))]
    assert sizes == [4, 4, 3, 1]


def test_regions_min_size():
    assert [len(r) for r in regions(Grid.parse(ISLANDS), min_size=2)] == [4, 4, 3]
