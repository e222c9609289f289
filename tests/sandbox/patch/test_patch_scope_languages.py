"""Reduced context (fuzz) keeps an edit in its function or section in C, Java, JS, TOML, YAML and Markdown too:
a dropped context line that names the scope (a function header, a `[section]`, a `key:` above the hunk, a
heading) must be where the hunk puts it, or the hunk is refused and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import PatchError
from sandbox.patch import apply_patch
from sandbox.patch.scope import opens_scope

CASES = [
    (
        "m.c",
        "int f(void)\n{\n    int x = 2;\n    return x;\n}\n\nint g(void)\n{\n    int x = 0;\n    return x;\n}\n",
        "--- a/m.c\n+++ b/m.c\n@@ -1,5 +1,5 @@\n int f(void)\n {\n-    int x = 0;\n+    int x = 1;\n"
        "     return x;\n }\n",
    ),
    (
        "A.java",
        "class A {\n    public int f() {\n        int x = 2;\n        return x;\n    }\n\n"
        "    public int g() {\n        int x = 0;\n        return x;\n    }\n}\n",
        "--- a/A.java\n+++ b/A.java\n@@ -2,4 +2,4 @@ class A {\n     public int f() {\n-        int x = 0;\n"
        "+        int x = 1;\n         return x;\n     }\n",
    ),
    (
        "c.toml",
        '[server]\nport = 8080\nhost = "a"\n\n[client]\nport = 80\nhost = "b"\n',
        '--- a/c.toml\n+++ b/c.toml\n@@ -1,3 +1,3 @@\n [server]\n-port = 80\n+port = 443\n host = "a"\n',
    ),
    (  # the same patch sent a second time: its change is already there
        "c.yml",
        "server:\n  enabled: true\n  port: 80\n  host: a\nclient:\n  enabled: false\n  port: 81\n  host: b\n",
        "--- a/c.yml\n+++ b/c.yml\n@@ -1,4 +1,4 @@\n server:\n-  enabled: false\n+  enabled: true\n"
        "   port: 80\n   host: a\n",
    ),
    (
        "doc.md",
        "## Install\n\nRun it.\nThen stop.\n\n## Usage\n\nRun this.\nThen stop.\n",
        "--- a/doc.md\n+++ b/doc.md\n@@ -1,4 +1,4 @@\n ## Install\n \n-Run this.\n+Run pip.\n Then stop.\n",
    ),
]


@pytest.mark.parametrize(("name", "before", "patch"), CASES, ids=[c[0] for c in CASES])
def test_a_fuzz_match_in_another_function_or_section_is_refused_and_nothing_written(
    tmp_path: Path, name: str, before: str, patch: str
) -> None:
    (tmp_path / name).write_text(before)
    with pytest.raises(PatchError, match="drops its context line"):
        apply_patch(tmp_path, patch)
    assert (tmp_path / name).read_text() == before


def test_a_fuzz_match_that_keeps_its_c_function_header_in_place_still_applies(tmp_path: Path) -> None:
    before = "int f(void)\n{\n    int x = 0;\n    return x;\n}\n"
    patch = (  # its last context line changed meanwhile; the header is where the hunk puts it
        "--- a/m.c\n+++ b/m.c\n@@ -1,4 +1,4 @@\n int f(void)\n {\n-    int x = 0;\n+    int x = 1;\n     return y;\n"
    )
    (tmp_path / "m.c").write_text(before)
    result = apply_patch(tmp_path, patch)
    assert result.files[0].fuzzy
    assert (tmp_path / "m.c").read_text() == before.replace("x = 0", "x = 1")


@pytest.mark.parametrize(
    ("line", "inner"),
    [
        *[("int f(void)", 4), ("public int f() {", 8), ("static char *g(int a, char **b) {", 4), ("  run() {", 4)],
        *[("void A::run() const {", 4), ("[server]", 0), ("[[bin]]", 0), ("server:", 2), ("## Usage", 0)],
    ],
)
def test_function_headers_sections_mapping_keys_and_headings_open_scopes(line: str, inner: int) -> None:
    assert opens_scope(line, inner)


@pytest.mark.parametrize(
    ("line", "inner"),
    [
        *[("if (x) {", 4), ("    foo(x);", 4), ("print(x)", 0), ("assert f(x)", 4), ("x = f(y)", 0)],
        *[("    self.f(x)", 4), ("        super().__init__()", 8), ("} else {", 4), ("    for (;;) {", 4)],
        *[("[1, 2]", 0), ("  else:", 4), ("server:", 0), ("# comment", 0), ("    return f(x)", 4)],
    ],
)
def test_statements_calls_comments_and_block_keywords_open_no_scope(line: str, inner: int) -> None:
    assert not opens_scope(line, inner)


def test_the_same_patch_sent_again_is_refused_as_applied_not_fuzzed_onto_a_twin_line(tmp_path: Path) -> None:
    before = "a = 1;\nx = 0;\nb = 2;\n\nc = 3;\nx = 0;\nd = 4;\n"
    patch = "--- a/m.c\n+++ b/m.c\n@@ -1,3 +1,3 @@\n a = 1;\n-x = 0;\n+x = 1;\n b = 2;\n"
    (tmp_path / "m.c").write_text(before)
    apply_patch(tmp_path, patch)
    once = (tmp_path / "m.c").read_text()
    assert once == before.replace("x = 0;", "x = 1;", 1)
    with pytest.raises(PatchError, match="already at line 1, where it says it goes"):
        apply_patch(tmp_path, patch)
    assert (tmp_path / "m.c").read_text() == once
