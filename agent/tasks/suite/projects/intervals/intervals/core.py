"""Operations on half-open intervals [start, end)."""

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Interval:
    start: int
    end: int

    def __post_init__(self):
        if self.end < self.start:
            raise ValueError(f"interval ends before it starts: {self.start}..{self.end}")

    def __len__(self):
        return self.end - self.start

    def overlaps(self, other):
        return self.start < other.end and other.start < self.end

    def contains(self, point):
        return self.start <= point < self.end


def merge(intervals, touching=True):
    """Sorted, non-overlapping intervals covering the same points; `touching` ones ([1,2) and [2,3)) are joined."""
    ordered = sorted(intervals)
    merged = []
    for current in ordered:
        if merged:
            last = merged[-1]
            joins = current.start <= last.end if touching else current.start < last.end
            if joins:
                merged[-1] = Interval(last.start, max(last.end, current.end))
                continue
        merged.append(current)
    return merged


def intersect(a, b):
    """The overlap of two intervals, or None."""
    start, end = max(a.start, b.start), min(a.end, b.end)
    if start >= end:
        return None
    return Interval(start, end)


def total_length(intervals):
    """Points covered by at least one interval."""
    return sum(len(i) for i in merge(intervals))


def gaps(intervals, within):
    """The parts of `within` no interval covers, in order."""
    out = []
    cursor = within.start
    for interval in merge(intervals):
        if interval.end <= within.start or interval.start >= within.end:
            continue
        if interval.start > cursor:
            out.append(Interval(cursor, interval.start))
        cursor = max(cursor, interval.end)
    if cursor < within.end:
        out.append(Interval(cursor, within.end))
    return out
