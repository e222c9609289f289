"""Errors only the code generator finds (the parser and the symbol table accept the code) are reported by the
block-wise check exactly as a full compile reports them, wherever the patch puts them: in a method of a long class
(compiled inside `if 1:`), in a top-level function, or at module level between functions."""

from __future__ import annotations

import symtable

import pytest

from sandbox.syntax import changed_syntax_error, syntax_error

#: 21 `for` loops, one in the other: one more block than the compiler allows.
NESTED_21 = "\n".join(f"{' ' * depth}for i{depth} in x:" for depth in range(21)) + "\n" + " " * 21 + "pass"
#: (where, code, message): the code replaces a method's body ("method"), a top-level function's body ("function"),
#: is put among the long class's statements ("class") or between two top-level functions ("module").
CODEGEN_ONLY = [
    ("class", "return 1", "'return' outside function"),
    ("module", "return 1", "'return' outside function"),
    ("class", "x = yield 1", "'yield' outside function"),
    ("module", "await something()", "'await' outside function"),
    ("method", "await something()", "'await' outside async function"),
    ("function", "return [i async for i in it()]", "asynchronous comprehension outside of an asynchronous function"),
    ("method", "async with lock:\n    pass", "'async with' outside async function"),
    ("function", "async for i in it():\n    pass", "'async for' outside async function"),
    ("module", "async def agen():\n    yield from it()", "'yield from' inside async function"),
    ("method", "break", "'break' outside loop"),
    ("function", "if x:\n    continue", "'continue' not properly in loop"),
    ("method", "try:\n    pass\nexcept:\n    pass\nexcept ValueError:\n    pass", "default 'except:' must be last"),
    ("function", "*a = range(3)", "starred assignment target must be in a list or tuple"),
    ("method", "*a", "can't use starred expression here"),
    ("function", "a, *b, *c = range(5)", "multiple starred expressions in assignment"),
    ("class", "(a, __debug__) = (1, 2)", "cannot assign to __debug__"),
    ("function", "del __debug__", "cannot delete __debug__"),
    ("method", "return dict(a=1, a=2)", "keyword argument repeated: a"),
    ("module", "from __future__ import annotations", "from __future__ imports must occur at the beginning of the file"),
    ("function", NESTED_21, "too many statically nested blocks"),
    ("method", "match x:\n case y:\n  pass\n case 1:\n  pass", "name capture 'y' makes remaining patterns unreachable"),
    ("function", "match x:\n case (a, a):\n  pass", "multiple assignments to name 'a' in pattern"),
    ("method", "match x:\n case _:\n  pass\n case 2:\n  pass", "wildcard makes remaining patterns unreachable"),
    ("function", "match x:\n case [a] | (b,):\n  pass", "alternative patterns bind different names"),
    ("method", "match x:\n case {'a': _, 'a': _}:\n  pass", "mapping pattern checks duplicate key ('a')"),
    ("function", "match x:\n case Point(a=_, a=_):\n  pass", "attribute name repeated in class pattern: a"),
    ("method", "match x:\n case [*a, *b]:\n  pass", "multiple starred names in sequence pattern"),
]
INDENT = {"method": "        ", "function": "    ", "class": "    ", "module": ""}


def _module() -> list[str]:
    """40 top-level functions, then a class of 60 methods: long enough to be checked block by block."""
    lines = ['"""A long module."""', "", "import os", ""]
    for n in range(40):
        lines += [f"def f{n}(x):", f"    return x + {n}", ""]
    lines += ["class Big:", '    """Big."""', ""]
    for n in range(60):
        lines += [f"    def m{n}(self, x):", f"        return x * {n}", ""]
    return [*lines, "", "TAIL = 1"]


def _inject(where: str, code: str) -> tuple[list[str], list[str], int]:
    """The module with `code` put in its place: its lines, the injected lines and the index of the first one."""
    lines = _module()
    new = [INDENT[where] + line for line in code.split("\n")]
    if where == "method":
        at = lines.index("    def m31(self, x):") + 1
        lines[at : at + 1] = new
    elif where == "function":
        at = lines.index("def f17(x):") + 1
        lines[at : at + 1] = new
    elif where == "class":
        at = lines.index("    def m44(self, x):") + 3
        lines[at:at] = new
    else:
        at = lines.index("def f23(x):")
        lines[at:at] = [*new, ""]
    return lines, new, at


@pytest.mark.parametrize(("where", "code", "message"), CODEGEN_ONLY, ids=[m for _, _, m in CODEGEN_ONLY])
def test_an_error_only_the_code_generator_finds_is_reported_as_a_full_compile_reports_it(
    where: str, code: str, message: str
) -> None:
    lines, new, at = _inject(where, code)
    source = "\n".join(lines).encode()
    symtable.symtable(source.decode(), "m.py", "exec")  # the parser and the symbol table accept it
    full = syntax_error(source, "m.py")
    assert full is not None
    assert full[1] == message
    assert changed_syntax_error(source, lines, [(at, at + len(new))], "m.py") == full


@pytest.mark.parametrize(("where", "code"), [(w, c) for w, c, _ in CODEGEN_ONLY[:6]])
def test_the_same_lines_in_a_block_the_patch_did_not_touch_are_not_reported(where: str, code: str) -> None:
    lines, _, _ = _inject(where, code)
    elsewhere = lines.index("def f3(x):") + 1
    assert changed_syntax_error("\n".join(lines).encode(), lines, [(elsewhere, elsewhere + 1)], "m.py") is None
