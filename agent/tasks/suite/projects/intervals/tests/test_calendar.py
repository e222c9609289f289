import pytest

from intervals import Calendar, Conflict, Interval


def test_booking_returns_the_interval():
    cal = Calendar(8, 18)
    assert cal.book("ann", 9, 10) == Interval(9, 10)


def test_overlapping_booking_is_a_conflict():
    cal = Calendar(8, 18)
    cal.book("ann", 9, 11)
    with pytest.raises(Conflict) as caught:
        cal.book("bob", 10, 12)
    assert caught.value.existing == Interval(9, 11)


def test_back_to_back_bookings_are_fine():
    cal = Calendar(8, 18)
    cal.book("ann", 9, 10)
    cal.book("bob", 10, 11)
    assert len(cal.bookings) == 2


def test_booking_outside_opening_hours():
    cal = Calendar(8, 18)
    with pytest.raises(ValueError, match="outside opening hours"):
        cal.book("ann", 7, 9)
    with pytest.raises(ValueError):
        cal.book("ann", 17, 19)


def test_empty_booking_is_refused():
    with pytest.raises(ValueError):
        Calendar().book("ann", 3, 3)


def test_cancel_returns_the_owner():
    cal = Calendar()
    cal.book("ann", 1, 2)
    assert cal.cancel(1, 2) == "ann"
    assert cal.bookings == {}


def test_cancel_unknown_booking():
    with pytest.raises(KeyError):
        Calendar().cancel(1, 2)


def test_free_slots_with_minimum_length():
    cal = Calendar(8, 18)
    cal.book("ann", 9, 12)
    cal.book("bob", 13, 17)
    assert cal.free_slots() == [Interval(8, 9), Interval(12, 13), Interval(17, 18)]
    assert cal.free_slots(min_length=2) == []
