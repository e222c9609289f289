"""Breadth-first searches over a Grid."""

from collections import deque


def shortest_path(grid, start, goal, diagonal=False):
    """The points from `start` to `goal` inclusive along a shortest path, or None when unreachable."""
    if not grid.passable(start) or not grid.passable(goal):
        return None
    previous = {start: None}
    queue = deque([start])
    while queue:
        point = queue.popleft()
        if point == goal:
            break
        for nxt in grid.neighbours(point, diagonal=diagonal):
            if nxt not in previous:
                previous[nxt] = point
                queue.append(nxt)
    if goal not in previous:
        return None
    path = []
    point = goal
    while point is not None:
        path.append(point)
        point = previous[point]
    path.reverse()
    return path


def flood_fill(grid, start):
    """Every passable point reachable from `start` (including it)."""
    if not grid.passable(start):
        return set()
    seen = {start}
    stack = [start]
    while stack:
        point = stack.pop()
        for nxt in grid.neighbours(point):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def regions(grid, min_size=1):
    """Connected open areas of at least `min_size` points, largest first."""
    found = []
    assigned = set()
    for r in range(grid.height):
        for c in range(grid.width):
            point = (r, c)
            if point in assigned or not grid.passable(point):
                continue
            area = flood_fill(grid, point)
            assigned |= area
            if len(area) >= min_size:
                found.append(area)
    found.sort(key=len, reverse=True)
    return found
