"""What the one-shot prompt shows: the failing output, the relevant source, and the retrieved skills.

Relevant files, in order: the project's own (non-test) modules named in the tracebacks, then the modules the
failing test files import, then the rest. Each file goes in whole while the budget allows; a file too large for
what is left is reduced to the functions and classes whose names the failing tests mention.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path

from agent.tasks.model import TaskFolder
from agent.tasks.mutate import source_files
from sandbox.testing.models import TestCase
from skills_store.models import Skill

TRACE_PATH_RE = re.compile(r"([\w./-]+\.py):\d+")
NAME_RE = re.compile(r"\b([A-Za-z_]\w{2,})\b")
MAX_FAILURE_CHARS = 4000
MAX_SKILL_CHARS = 700


def _imported_paths(test_file: Path, sources: set[str]) -> list[str]:
    try:
        tree = ast.parse(test_file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        modules = []
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        for module in modules:
            base = module.replace(".", "/")
            for rel in (f"{base}.py", f"{base}/__init__.py"):
                if rel in sources and rel not in found:
                    found.append(rel)
    return found


def relevant_files(repo: Path, tf: TaskFolder, failures: Sequence[TestCase]) -> list[str]:
    sources = source_files(repo)
    known = set(sources)
    ordered: list[str] = []
    for case in failures:
        for path in TRACE_PATH_RE.findall(case.message or ""):
            path = path.lstrip("./")
            if path in known and path not in ordered:
                ordered.append(path)
    for test_path in dict.fromkeys(t.split("::", 1)[0] for t in tf.task.fail_to_pass):
        for rel in _imported_paths(repo / test_path, known):
            # A package's __init__ usually only re-exports; its siblings hold the code.
            if rel.endswith("__init__.py"):
                package = rel.rsplit("/", 1)[0]
                ordered += [s for s in sources if s.startswith(package + "/") and s not in ordered and s != rel]
            if rel not in ordered:
                ordered.append(rel)
    ordered += [s for s in sources if s not in ordered]
    return ordered


def excerpt(text: str, names: set[str]) -> str | None:
    """The top-level definitions (and methods) of `text` whose names are in `names`."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = text.splitlines()
    parts: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name in names:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            parts.append(f"# lines {start}-{node.end_lineno}\n" + "\n".join(lines[start - 1 : node.end_lineno]))
    return "\n\n".join(parts) or None


def files_block(repo: Path, tf: TaskFolder, failures: Sequence[TestCase], budget: int) -> str:
    names = set(NAME_RE.findall(" ".join(case.message or "" for case in failures)))
    for test_path in dict.fromkeys(t.split("::", 1)[0] for t in tf.task.fail_to_pass):
        try:
            names |= set(NAME_RE.findall((repo / test_path).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    out: list[str] = []
    left = budget
    for rel in relevant_files(repo, tf, failures):
        try:
            text = (repo / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) > left:
            reduced = excerpt(text, names)
            if reduced is None or len(reduced) > left:
                continue
            text = reduced
        out.append(f"### {rel}\n```python\n{text}\n```")
        left -= len(text)
        if left < 200:
            break
    return "\n\n".join(out)


def failures_block(failures: Sequence[TestCase]) -> str:
    text = "\n\n".join(f"{case.id} {case.outcome.upper()}\n{case.message or ''}" for case in failures)
    return text[:MAX_FAILURE_CHARS] or "(no test output)"


def skills_block(skills: Sequence[Skill]) -> str:
    if not skills:
        return ""
    lines = ["Lessons from earlier sessions (skills; apply one only if it fits this failure):"]
    for skill in skills:
        strategy = skill.strategy[:MAX_SKILL_CHARS]
        lines.append(f"- [{skill.skill_id}] {skill.title}\n  When you see: {skill.pattern[:300]}\n  Do: {strategy}")
    return "\n".join(lines)
