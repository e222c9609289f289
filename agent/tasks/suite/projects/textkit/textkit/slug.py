"""URL slugs."""

import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")


def slugify(text, separator="-", max_length=None):
    """Lowercase ASCII words joined by `separator`, at most `max_length` characters, never ending in it."""
    if not isinstance(text, str):
        raise TypeError("slugify() needs a string")
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NON_WORD.sub(separator, ascii_text.lower()).strip(separator)
    if max_length is not None and len(slug) > max_length:
        slug = slug[:max_length].rstrip(separator)
    return slug
