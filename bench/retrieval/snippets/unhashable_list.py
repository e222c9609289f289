"""Count visits per grid cell using [x, y] lists as dict keys."""

visits: dict = {}
for point in [[0, 1], [2, 3], [0, 1]]:
    visits[point] = visits.get(point, 0) + 1
print(visits)
