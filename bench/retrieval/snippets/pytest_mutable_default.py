"""Run with pytest: a helper with a list default leaks state between calls."""


def add_tag(tag: str, tags: list[str] = []) -> list[str]:
    tags.append(tag)
    return tags


def test_first_post_tags():
    assert add_tag("python") == ["python"]


def test_second_post_tags():
    assert add_tag("rust") == ["rust"]
