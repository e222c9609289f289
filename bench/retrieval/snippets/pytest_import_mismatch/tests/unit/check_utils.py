def slugify(text: str) -> str:
    return text.lower().replace(" ", "-")


def test_slugify():
    assert slugify("Hello World") == "hello-world"
