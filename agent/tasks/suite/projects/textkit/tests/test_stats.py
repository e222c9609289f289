from textkit import top_words, word_counts


def test_word_counts_are_case_insensitive():
    assert word_counts("Apple apple APPLE pie") == {"apple": 3, "pie": 1}


def test_word_counts_min_length():
    assert word_counts("a bb ccc bb", min_length=2) == {"bb": 2, "ccc": 1}


def test_top_words_breaks_ties_alphabetically():
    assert top_words("b a c b a d", n=2) == ["a", "b"]


def test_top_words_default_three():
    assert top_words("x y z x y x w") == ["x", "y", "w"]


def test_top_words_non_positive_n():
    assert top_words("a b c", n=0) == []
