import pytest

from textkit import truncate, wrap


def test_wrap_breaks_between_words():
    assert wrap("the quick brown fox jumps", width=10) == ["the quick", "brown fox", "jumps"]


def test_wrap_keeps_a_line_of_exactly_width():
    assert wrap("abcde fghij", width=11) == ["abcde fghij"]


def test_wrap_long_word_gets_its_own_line():
    assert wrap("a verylongword b", width=5) == ["a", "verylongword", "b"]


def test_wrap_empty_text():
    assert wrap("   ") == []


def test_wrap_rejects_zero_width():
    with pytest.raises(ValueError):
        wrap("text", width=0)


def test_truncate_leaves_short_text():
    assert truncate("short", 5) == "short"


def test_truncate_adds_suffix_within_limit():
    assert truncate("hello world", 8) == "hello..."
    assert len(truncate("hello world", 8)) == 8


def test_truncate_custom_suffix():
    assert truncate("abcdefgh", 5, suffix="~") == "abcd~"


def test_truncate_limit_shorter_than_suffix():
    with pytest.raises(ValueError):
        truncate("abcdefgh", 2)
