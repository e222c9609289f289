"""Small text utilities."""

from textkit.case import camel_to_snake, snake_to_camel, title_case
from textkit.slug import slugify
from textkit.stats import top_words, word_counts
from textkit.wrap import truncate, wrap

__all__ = ["camel_to_snake", "slugify", "snake_to_camel", "title_case", "top_words", "truncate", "word_counts", "wrap"]
