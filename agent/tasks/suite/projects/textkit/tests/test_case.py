from textkit import camel_to_snake, snake_to_camel, title_case


def test_camel_to_snake():
    assert camel_to_snake("parseHttpResponse") == "parse_http_response"


def test_camel_to_snake_with_digits():
    assert camel_to_snake("version2Name") == "version2_name"


def test_snake_to_camel():
    assert snake_to_camel("parse_http_response") == "parseHttpResponse"


def test_snake_to_camel_upper_first():
    assert snake_to_camel("user_id", upper_first=True) == "UserId"


def test_snake_to_camel_ignores_empty_parts():
    assert snake_to_camel("__a__b") == "aB"
    assert snake_to_camel("___") == ""


def test_title_case_keeps_small_words_lowercase():
    assert title_case("the lord of the rings") == "The Lord of the Rings"


def test_title_case_first_word_always_capitalised():
    assert title_case("a tale in time") == "A Tale in Time"
