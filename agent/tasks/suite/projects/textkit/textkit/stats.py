"""Word statistics."""

import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z']+")


def word_counts(text, min_length=1):
    """How often each lowercase word of at least `min_length` letters appears."""
    counts = Counter()
    for word in _WORD.findall(text):
        word = word.lower().strip("'")
        if len(word) >= min_length:
            counts[word] += 1
    return counts


def top_words(text, n=3):
    """The `n` most frequent words, most frequent first, ties alphabetically."""
    if n <= 0:
        return []
    counts = word_counts(text)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [word for word, _ in ranked[:n]]
