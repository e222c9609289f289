"""Wrapping and truncating text."""


def wrap(text, width=20):
    """Split `text` into lines of at most `width` characters, breaking between words."""
    if width < 1:
        raise ValueError("width must be positive")
    lines = []
    current = ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current = current + " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def truncate(text, limit, suffix="..."):
    """`text` cut to `limit` characters including `suffix`, or unchanged when it fits."""
    if len(text) <= limit:
        return text
    if limit < len(suffix):
        raise ValueError("limit is shorter than the suffix")
    return text[: limit - len(suffix)] + suffix
