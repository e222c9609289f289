def test_slug_roundtrip():
    assert "hello-world".replace("-", " ") == "hello world"
