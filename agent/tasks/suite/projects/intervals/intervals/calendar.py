"""A room calendar: bookings may not overlap."""

from intervals.core import Interval, gaps


class Conflict(Exception):
    def __init__(self, wanted, existing):
        super().__init__(f"{wanted} overlaps {existing}")
        self.wanted = wanted
        self.existing = existing


class Calendar:
    def __init__(self, opening=0, closing=24):
        self.day = Interval(opening, closing)
        self.bookings = {}

    def book(self, who, start, end):
        wanted = Interval(start, end)
        if len(wanted) == 0:
            raise ValueError("a booking needs a positive length")
        if wanted.start < self.day.start or wanted.end > self.day.end:
            raise ValueError(f"{wanted} is outside opening hours {self.day}")
        for existing, owner in self.bookings.items():
            if existing.overlaps(wanted):
                raise Conflict(wanted, existing)
        self.bookings[wanted] = who
        return wanted

    def cancel(self, start, end):
        interval = Interval(start, end)
        if interval not in self.bookings:
            raise KeyError(f"no booking {interval}")
        return self.bookings.pop(interval)

    def free_slots(self, min_length=1):
        return [g for g in gaps(self.bookings, self.day) if len(g) >= min_length]
