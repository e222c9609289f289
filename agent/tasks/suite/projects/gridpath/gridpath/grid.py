"""A rectangular grid of characters; '#' is a wall."""

WALL = "#"


class Grid:
    def __init__(self, rows):
        if not rows:
            raise ValueError("a grid needs at least one row")
        width = len(rows[0])
        if any(len(row) != width for row in rows):
            raise ValueError("all rows must have the same width")
        self.rows = list(rows)
        self.height = len(rows)
        self.width = width

    @classmethod
    def parse(cls, text):
        return cls([line for line in text.strip().splitlines() if line.strip()])

    def __getitem__(self, point):
        row, col = point
        return self.rows[row][col]

    def in_bounds(self, point):
        row, col = point
        return 0 <= row < self.height and 0 <= col < self.width

    def passable(self, point):
        return self.in_bounds(point) and self[point] != WALL

    def neighbours(self, point, diagonal=False):
        row, col = point
        steps = [(-1, 0), (1, 0), (0, -1), (0, 1)]
        if diagonal:
            steps += [(-1, -1), (-1, 1), (1, -1), (1, 1)]
        return [(row + dr, col + dc) for dr, dc in steps if self.passable((row + dr, col + dc))]

    def find(self, char):
        """The first point holding `char`, scanning rows top to bottom."""
        for r, row in enumerate(self.rows):
            c = row.find(char)
            if c != -1:
                return (r, c)
        raise KeyError(f"{char!r} is not on the grid")
