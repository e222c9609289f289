"""AST mutation operators: each finds sites in a module and says how to break them, as a text edit.

Edits are spans of the original source (so the gold patch is the one changed line, not a reformatted file).
Every operator is a *bug class* named after the mistake a person makes, and lists the exception types its bugs
usually surface as; `weights` uses those to favour what the skill bank knows about.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agent.tasks.source import Source


@dataclass(frozen=True)
class Edit:
    """Replace `source[start:end]` with `text`."""

    operator: str
    start: int
    end: int
    text: str
    line: int
    description: str


_CMP_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==", "is not": "is", "is": "is not"}
_CMP_SWAP |= {"not in": "in", "in": "not in"}
_CMP_RE = re.compile(r"not\s+in|is\s+not|<=|>=|==|!=|<|>|\bin\b|\bis\b")
_BIN_SWAP = {"+": "-", "-": "+", "*": "/", "/": "*", "//": "/", "%": "//", "**": "*"}
_BIN_RE = re.compile(r"\*\*|//|[-+*/%]")
_EXC_SWAP = {"ValueError": "TypeError", "TypeError": "ValueError", "KeyError": "ValueError"}
_EXC_SWAP |= {"IndexError": "ValueError", "ZeroDivisionError": "ValueError", "LookupError": "ValueError"}
_QUIET_CALLS = re.compile(r"^(print|log|logger|logging|warn|warnings|debug|info)\b")

#: Exception types each bug class tends to surface as (assertion failures everywhere).
ERROR_CLASSES: dict[str, tuple[str, ...]] = {
    "comparison_flip": ("AssertionError", "IndexError"),
    "off_by_one": ("IndexError", "AssertionError"),
    "wrong_operator": ("AssertionError", "TypeError", "ZeroDivisionError"),
    "removed_guard": ("ZeroDivisionError", "KeyError", "IndexError", "AttributeError", "TypeError", "ValueError"),
    "swapped_arguments": ("TypeError", "AssertionError"),
    "wrong_default": ("AssertionError", "TypeError"),
    "changed_exception": ("ValueError", "TypeError", "KeyError"),
    "wrong_return": ("AttributeError", "TypeError", "AssertionError"),
    "dropped_call": ("AssertionError", "KeyError", "AttributeError"),
    "negated_condition": ("AssertionError", "ValueError"),
}


def _gap_edit(
    src: Source, op: str, left: ast.AST, right: ast.AST, pattern: re.Pattern[str], swap: dict[str, str]
) -> Edit | None:
    start, end = src.end(left), src.start(right)
    gap = src.text[start:end]
    found = pattern.search(gap)
    if not found:
        return None
    old = " ".join(found.group(0).split())
    new = swap.get(old)
    if new is None:
        return None
    a, b = start + found.start(), start + found.end()
    return Edit(op, a, b, new, left.lineno, f"`{old}` became `{new}`")  # type: ignore[attr-defined]


def comparison_flip(tree: ast.AST, src: Source) -> Iterator[Edit]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            edit = _gap_edit(src, "comparison_flip", node.left, node.comparators[0], _CMP_RE, _CMP_SWAP)
            if edit:
                yield edit


def wrong_operator(tree: ast.AST, src: Source) -> Iterator[Edit]:
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and not isinstance(node.left, ast.Constant | ast.JoinedStr):
            edit = _gap_edit(src, "wrong_operator", node.left, node.right, _BIN_RE, _BIN_SWAP)
            if edit:
                yield edit
        elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
            edit = _gap_edit(src, "wrong_operator", node.values[0], node.values[1], re.compile(r"\b(and|or)\b"),
                             {"and": "or", "or": "and"})  # fmt: skip
            if edit:
                yield edit
        elif isinstance(node, ast.AugAssign):
            edit = _gap_edit(src, "wrong_operator", node.target, node.value, re.compile(r"[-+]=(?!=)"),
                             {"+=": "-=", "-=": "+="})  # fmt: skip
            if edit:
                yield edit


def _int_constants(tree: ast.AST) -> Iterator[ast.Constant]:
    """Integer literals in comparisons, subscripts, slices, range() calls and arithmetic (not defaults)."""
    for node in ast.walk(tree):
        children: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            children = [node.left, *node.comparators]
        elif isinstance(node, ast.Subscript):
            children = [node.slice]
        elif isinstance(node, ast.Slice):
            children = [c for c in (node.lower, node.upper, node.step) if c is not None]
        elif isinstance(node, ast.BinOp):
            children = [node.left, node.right]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            children = list(node.args)
        for child in children:
            if isinstance(child, ast.Constant) and type(child.value) is int and abs(child.value) <= 1000:
                yield child


def off_by_one(tree: ast.AST, src: Source) -> Iterator[Edit]:
    seen: set[int] = set()
    for const in _int_constants(tree):
        start = src.start(const)
        if start in seen:
            continue
        seen.add(start)
        value = const.value
        assert isinstance(value, int)
        for new in (value + 1, value - 1) if value > 0 else (value + 1,):
            yield Edit("off_by_one", start, src.end(const), str(new), const.lineno, f"{value} became {new}")


def _statement_lines(src: Source, node: ast.stmt, parent_body: list[ast.stmt]) -> Edit | None:
    """An edit deleting the whole lines of `node`, when it stands alone on them and is not alone in its block."""
    if len(parent_body) < 2:
        return None
    start, end = src.start(node), src.end(node)
    line_start = src.text.rfind("\n", 0, start) + 1
    line_end = src.text.find("\n", end)
    line_end = len(src.text) if line_end == -1 else line_end + 1
    if src.text[line_start:start].strip() or src.text[end:line_end].split("#", 1)[0].strip():
        return None
    return Edit("", line_start, line_end, "", node.lineno, "")


def _bodies(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body


def removed_guard(tree: ast.AST, src: Source) -> Iterator[Edit]:
    for body in _bodies(tree):
        for stmt in body:
            exits = ast.Raise | ast.Return | ast.Continue | ast.Break
            if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and isinstance(stmt.body[0], exits):
                edit = _statement_lines(src, stmt, body)
                if edit:
                    guard = src.segment(stmt.test).splitlines()[0][:60]
                    yield Edit("removed_guard", edit.start, edit.end, "", stmt.lineno, f"guard `if {guard}` removed")


def dropped_call(tree: ast.AST, src: Source) -> Iterator[Edit]:
    for body in _bodies(tree):
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = src.segment(stmt.value.func)
                if _QUIET_CALLS.match(call):
                    continue
                edit = _statement_lines(src, stmt, body)
                if edit:
                    yield Edit("dropped_call", edit.start, edit.end, "", stmt.lineno, f"call to `{call[:60]}` dropped")


def swapped_arguments(tree: ast.AST, src: Source) -> Iterator[Edit]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        first, second = node.args[0], node.args[1]
        if isinstance(first, ast.Starred) or isinstance(second, ast.Starred):
            continue
        a, b = src.segment(first), src.segment(second)
        if a == b or "\n" in a + b:
            continue
        middle = src.text[src.end(first) : src.start(second)]
        yield Edit("swapped_arguments", src.start(first), src.end(second), b + middle + a, node.lineno,
                   f"arguments `{a[:30]}` and `{b[:30]}` swapped")  # fmt: skip


def wrong_default(tree: ast.AST, src: Source) -> Iterator[Edit]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            if not isinstance(default, ast.Constant):
                continue
            value = default.value
            if isinstance(value, bool):
                new = str(not value)
            elif isinstance(value, int | float):
                new = repr(value + 1)
            else:
                continue
            yield Edit("wrong_default", src.start(default), src.end(default), new, default.lineno,
                       f"default {value!r} became {new}")  # fmt: skip


def changed_exception(tree: ast.AST, src: Source) -> Iterator[Edit]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise) or node.exc is None:
            continue
        name = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if isinstance(name, ast.Name) and name.id in _EXC_SWAP:
            new = _EXC_SWAP[name.id]
            yield Edit("changed_exception", src.start(name), src.end(name), new, node.lineno,
                       f"raises {new} instead of {name.id}")  # fmt: skip


def wrong_return(tree: ast.AST, src: Source) -> Iterator[Edit]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            new = str(not value.value)
        elif isinstance(value, ast.Constant) and value.value is None:
            continue
        else:
            new = "None"
        old = src.segment(value).splitlines()[0][:40]
        yield Edit("wrong_return", src.start(value), src.end(value), new, node.lineno, f"returns {new} not `{old}`")


def negated_condition(tree: ast.AST, src: Source) -> Iterator[Edit]:
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While) and not isinstance(node.test, ast.UnaryOp | ast.Constant):
            text = src.segment(node.test)
            if "\n" in text:
                continue
            yield Edit("negated_condition", src.start(node.test), src.end(node.test), f"not ({text})", node.lineno,
                       f"condition `{text[:50]}` negated")  # fmt: skip


OPERATORS: dict[str, Callable[[ast.AST, Source], Iterator[Edit]]] = {
    "comparison_flip": comparison_flip,
    "off_by_one": off_by_one,
    "wrong_operator": wrong_operator,
    "removed_guard": removed_guard,
    "swapped_arguments": swapped_arguments,
    "wrong_default": wrong_default,
    "changed_exception": changed_exception,
    "wrong_return": wrong_return,
    "dropped_call": dropped_call,
    "negated_condition": negated_condition,
}
