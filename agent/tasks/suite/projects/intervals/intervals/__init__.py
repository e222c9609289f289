"""Half-open integer intervals [start, end)."""

from intervals.calendar import Calendar, Conflict
from intervals.core import Interval, gaps, intersect, merge, total_length

__all__ = ["Calendar", "Conflict", "Interval", "gaps", "intersect", "merge", "total_length"]
