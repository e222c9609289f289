import pytest

from intervals import Interval, gaps, intersect, merge, total_length


def test_an_interval_cannot_end_before_it_starts():
    with pytest.raises(ValueError):
        Interval(5, 4)


def test_length_and_contains_are_half_open():
    i = Interval(2, 5)
    assert len(i) == 3
    assert i.contains(2)
    assert not i.contains(5)


def test_overlaps_excludes_touching_intervals():
    assert Interval(1, 3).overlaps(Interval(2, 4))
    assert not Interval(1, 2).overlaps(Interval(2, 3))


def test_merge_joins_overlapping_and_sorts():
    assert merge([Interval(5, 8), Interval(1, 3), Interval(2, 4)]) == [Interval(1, 4), Interval(5, 8)]


def test_merge_joins_touching_by_default():
    assert merge([Interval(1, 2), Interval(2, 3)]) == [Interval(1, 3)]


def test_merge_can_keep_touching_apart():
    assert merge([Interval(1, 2), Interval(2, 3)], touching=False) == [Interval(1, 2), Interval(2, 3)]


def test_merge_nested():
    assert merge([Interval(1, 10), Interval(2, 3)]) == [Interval(1, 10)]


def test_intersect():
    assert intersect(Interval(1, 5), Interval(3, 8)) == Interval(3, 5)
    assert intersect(Interval(1, 3), Interval(3, 8)) is None


def test_total_length_counts_overlaps_once():
    assert total_length([Interval(0, 5), Interval(3, 7), Interval(10, 11)]) == 8


def test_gaps_inside_a_window():
    busy = [Interval(2, 4), Interval(6, 7)]
    assert gaps(busy, Interval(0, 10)) == [Interval(0, 2), Interval(4, 6), Interval(7, 10)]


def test_gaps_ignores_intervals_outside_the_window():
    assert gaps([Interval(20, 30)], Interval(0, 5)) == [Interval(0, 5)]


def test_gaps_when_fully_covered():
    assert gaps([Interval(0, 10)], Interval(2, 8)) == []
