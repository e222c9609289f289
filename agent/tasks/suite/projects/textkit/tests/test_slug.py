import pytest

from textkit import slugify


def test_slugify_lowercases_and_joins_words():
    assert slugify("Hello World") == "hello-world"


def test_slugify_strips_accents_and_punctuation():
    assert slugify("Crème brûlée, s'il vous plaît!") == "creme-brulee-s-il-vous-plait"


def test_slugify_custom_separator():
    assert slugify("a b c", separator="_") == "a_b_c"


def test_slugify_max_length_does_not_end_in_separator():
    assert slugify("hello big world", max_length=10) == "hello-big"


def test_slugify_rejects_non_strings():
    with pytest.raises(TypeError):
        slugify(42)


def test_slugify_of_only_punctuation_is_empty():
    assert slugify("!!!") == ""
