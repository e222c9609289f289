"""Build the retrieval eval set from real failures: `python -m bench.retrieval.build_evalset`.

Every snippet under `snippets/` is a small broken program. It is copied into a fresh temporary project, run with
the current interpreter (or under pytest), and its real output becomes a `traceback` query whose expected answer
is a starter skill. Hand-written `description` queries phrase the same problems the way a person would, without
the error text. The result is written to `evalset.jsonl` next to this file.

Paths in the captured output are made machine independent: the temporary project becomes `/home/dev/project`,
the virtual environment `/home/dev/project/.venv` and the base interpreter `/usr/local`.

The committed eval set was generated with Python 3.11, the oldest version the project supports. Two snippets
(`fstring_nested_quotes.py`, `newer_syntax_type_alias.py`) use syntax that Python 3.12 accepts, so on 3.12+ they
stop failing and the build stops with `SnippetDidNotFail`; regenerate with a 3.11 interpreter.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bench.retrieval.descriptions import DESCRIPTIONS

HERE = Path(__file__).resolve().parent
SNIPPETS_DIR = HERE / "snippets"
EVALSET_PATH = HERE / "evalset.jsonl"
PROJECT = "/home/dev/project"
MAX_LINES = 60
MAX_CHARS = 4000
PYTEST_OPTS = ("-q", "-p", "no:cacheprovider")


@dataclass(frozen=True)
class Snippet:
    """One broken program and the starter skill that answers its failure."""

    name: str
    """A file `snippets/<name>` or a folder `snippets/<name>/` (run as `main.py`, or as pytest over `tests/`)."""
    expected: str
    runner: Literal["python", "pytest"] = "python"


SNIPPETS: tuple[Snippet, ...] = (
    Snippet("module_not_found.py", "starter-module-not-found"),
    Snippet("module_not_found_db.py", "starter-module-not-found"),
    Snippet("circular_import", "starter-circular-import"),
    Snippet("circular_import_attr", "starter-circular-import"),
    Snippet("missing_export", "starter-cannot-import-name"),
    Snippet("relative_import_beyond", "starter-relative-import-beyond-top"),
    Snippet("shadowed_stdlib", "starter-module-shadowed-by-local-file"),
    Snippet("shadowed_self_import", "starter-module-shadowed-by-local-file"),
    Snippet("attribute_on_none.py", "starter-attribute-on-none"),
    Snippet("attribute_on_none_get.py", "starter-attribute-on-none"),
    Snippet("none_not_subscriptable.py", "starter-none-not-subscriptable"),
    Snippet("keyerror_payload.py", "starter-keyerror-missing-dict-key"),
    Snippet("indexerror_empty.py", "starter-indexerror-list-out-of-range"),
    Snippet("wrong_arg_count_self.py", "starter-wrong-positional-arg-count"),
    Snippet("wrong_arg_count_missing.py", "starter-wrong-positional-arg-count"),
    Snippet("unexpected_keyword.py", "starter-unexpected-keyword-argument"),
    Snippet("unhashable_list.py", "starter-unhashable-type"),
    Snippet("not_json_serializable.py", "starter-not-json-serializable"),
    Snippet("coroutine_not_awaited.py", "starter-coroutine-never-awaited"),
    Snippet("unpack_too_many.py", "starter-unpack-wrong-number-of-values"),
    Snippet("unpack_not_enough.py", "starter-unpack-wrong-number-of-values"),
    Snippet("recursion_no_base_case.py", "starter-recursion-depth-exceeded"),
    Snippet("unbound_local.py", "starter-unbound-local-variable"),
    Snippet("name_error_typo.py", "starter-name-not-defined"),
    Snippet("name_error_missing_import.py", "starter-name-not-defined"),
    Snippet("indentation_unindent.py", "starter-indentation-tabs-spaces"),
    Snippet("tab_error.py", "starter-indentation-tabs-spaces"),
    Snippet("fstring_nested_quotes.py", "starter-fstring-nested-quotes"),
    Snippet("newer_syntax_type_alias.py", "starter-syntax-from-newer-python"),
    Snippet("unicode_decode.py", "starter-unicode-decode-wrong-encoding"),
    Snippet("file_not_found_relative.py", "starter-file-not-found-relative-path"),
    Snippet("permission_denied_exec.py", "starter-permission-denied"),
    Snippet("zero_division_average.py", "starter-zero-division"),
    Snippet("naive_aware_compare.py", "starter-naive-vs-aware-datetime"),
    Snippet("dict_changed_size.py", "starter-dict-changed-size-during-iteration"),
    Snippet("event_loop_closed.py", "starter-asyncio-event-loop-closed"),
    Snippet("asyncio_run_nested.py", "starter-asyncio-run-inside-running-loop"),
    Snippet("collections_mapping_import.py", "starter-collections-abc-removed-aliases"),
    Snippet("collections_attr.py", "starter-collections-abc-removed-aliases"),
    Snippet("json_decode_empty.py", "starter-json-decode-empty-or-not-json"),
    Snippet("subprocess_timeout.py", "starter-subprocess-timeout-expired"),
    Snippet("str_concat_int.py", "starter-str-concatenation-type"),
    Snippet("attribute_typo.py", "starter-attribute-missing-on-object"),
    Snippet("builtin_shadowed_not_callable.py", "starter-object-not-callable"),
    Snippet("compare_str_int.py", "starter-compare-str-with-int"),
    Snippet("pytest_assert_diff.py", "starter-pytest-read-assertion-diff", "pytest"),
    Snippet("pytest_fixture_not_found.py", "starter-pytest-fixture-not-found", "pytest"),
    Snippet("pytest_async_unsupported.py", "starter-pytest-async-tests-not-supported", "pytest"),
    Snippet("pytest_float_equality.py", "starter-float-equality", "pytest"),
    Snippet("pytest_mutable_default.py", "starter-mutable-default-argument", "pytest"),
    Snippet("pytest_import_mismatch", "starter-pytest-import-file-mismatch", "pytest"),
    Snippet("pytest_collection_src_layout", "starter-pytest-collection-cannot-import-project", "pytest"),
)


class SnippetDidNotFail(RuntimeError):
    """A snippet exited with status 0: it no longer demonstrates its failure."""


def snippet_command(snippet: Snippet, workdir: Path) -> list[str]:
    source = SNIPPETS_DIR / snippet.name
    if snippet.runner == "pytest":
        if source.is_dir():
            return [sys.executable, "-m", "pytest", *PYTEST_OPTS, "-o", "python_files=check_*.py", "tests"]
        return [sys.executable, "-m", "pytest", *PYTEST_OPTS, snippet.name]
    return [sys.executable, "main.py" if source.is_dir() else snippet.name]


def run_snippet(snippet: Snippet, timeout_s: float = 120.0) -> str:
    """Run one snippet in a fresh temporary project and return its normalised, trimmed output."""
    source = SNIPPETS_DIR / snippet.name
    with tempfile.TemporaryDirectory(prefix="skillbank-snippet-") as tmp:
        workdir = Path(tmp) / "project"
        if source.is_dir():
            shutil.copytree(source, workdir, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            workdir.mkdir()
            shutil.copy2(source, workdir / snippet.name)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": tmp,
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "COLUMNS": "100",
            "PY_COLORS": "0",
            "NO_COLOR": "1",
        }
        proc = subprocess.run(
            snippet_command(snippet, workdir),
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        if proc.returncode == 0:
            raise SnippetDidNotFail(f"{snippet.name} exited with status 0; it must fail")
        return normalise(proc.stdout, workdir)


def normalise(output: str, workdir: Path) -> str:
    """Replace machine-specific paths and keep the tail an agent would pass as a query."""
    replacements = [
        (str(workdir.resolve()), PROJECT),
        (str(workdir), PROJECT),
        (str(Path(sys.prefix)), f"{PROJECT}/.venv"),
        (str(Path(sys.base_prefix)), "/usr/local"),
    ]
    for old, new in sorted(replacements, key=lambda pair: len(pair[0]), reverse=True):
        output = output.replace(old, new)
    lines = output.rstrip().splitlines()[-MAX_LINES:]
    while len(lines) > 1 and sum(len(line) + 1 for line in lines) > MAX_CHARS:
        lines.pop(0)
    return "\n".join(lines)


def build() -> list[dict[str, str | None]]:
    rows: list[dict[str, str | None]] = []
    for snippet in SNIPPETS:
        stem = snippet.name.removesuffix(".py")
        rows.append(
            {
                "id": f"tb-{stem}",
                "query": run_snippet(snippet),
                "kind": "traceback",
                "expected": snippet.expected,
                "snippet": snippet.name,
            }
        )
    counts: dict[str, int] = {}
    for expected, snippet_name, text in DESCRIPTIONS:
        slug = expected.removeprefix("starter-")
        counts[slug] = counts.get(slug, 0) + 1
        rows.append(
            {
                "id": f"desc-{slug}-{counts[slug]}",
                "query": text,
                "kind": "description",
                "expected": expected,
                "snippet": snippet_name,
            }
        )
    return rows


def main() -> None:
    rows = build()
    with EVALSET_PATH.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    tracebacks = sum(1 for r in rows if r["kind"] == "traceback")
    print(f"wrote {len(rows)} pairs ({tracebacks} tracebacks, {len(rows) - tracebacks} descriptions) to {EVALSET_PATH}")


if __name__ == "__main__":
    main()
