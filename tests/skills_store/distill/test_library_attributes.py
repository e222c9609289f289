# ruff: noqa: E501
"""An attribute that no file of the workspace defines is a library's: renaming it (`Thread.isAlive()` ->
`is_alive()`) is a lesson with a rule that merges across repos and earns credit, not a user's typo."""

from __future__ import annotations

from pathlib import Path

from skills_store.distill import lesson
from skills_store.distill.credit import applied_rule
from skills_store.distill.heuristic import HeuristicDistiller
from skills_store.distill.names import Names
from skills_store.distill.rules import rewrites

ISALIVE = "AttributeError: 'Thread' object has no attribute 'isAlive'"


def _workspace(root: Path, files: dict[str, str]) -> str:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return str(root)


def _session(
    steps,
    tmp_path: Path,
    module: str,
    func: str,
    old: str,
    new: str,
    tid: str,
    *extra,
    edited: dict[str, str] | None = None,
):
    code = f"import threading\n\n\ndef {func}(threads):\n    {old}\n"
    test = f"import threading\nfrom {module} import {func}\n\n\ndef test_{func}():\n    assert {func}([threading.Thread(target=print)]) in (False, [])\n"
    ws = _workspace(
        tmp_path / tid, {f"{module}.py": code.replace(old, new), f"test_{module}.py": test, **(edited or {})}
    )
    patch = f"--- a/{module}.py\n+++ b/{module}.py\n@@ -4,2 +4,2 @@\n def {func}(threads):\n-    {old}\n+    {new}\n"
    message = f"{ISALIVE}\n    def {func}(threads):\n>       {old}\nE       {ISALIVE}\n\n{module}.py:5: AttributeError"
    return steps.trajectory(
        *extra,
        steps.run("failed", [(f"test_{module}.py::test_{func}", message)]),
        steps.patch(patch, [f"{module}.py"]),
        steps.run("passed"),
        tid=tid,
        repo=f"acme/{module}",
        workspace=ws,
    )


def test_a_library_method_rename_is_a_lesson_with_a_rule(steps, tmp_path) -> None:
    traj = _session(
        steps, tmp_path, "worker", "running", "return threads[0].isAlive()", "return threads[0].is_alive()", "traj-a"
    )
    [skill] = HeuristicDistiller().distill([traj])
    assert skill.pattern == ISALIVE
    assert [(r.before, r.after) for r in skill.rule] == [("<name>[...].isAlive()", "<name>[...].is_alive()")]
    assert "lesson" in skill.tags


def test_the_same_rename_in_another_repo_is_the_same_lesson_and_earns_credit(steps, tmp_path) -> None:
    [first] = HeuristicDistiller().distill(
        [_session(steps, tmp_path, "worker", "running", "return t.isAlive()", "return t.is_alive()", "traj-a")]
    )
    assert [(r.before, r.after) for r in first.rule] == [("<name>.isAlive()", "<name>.is_alive()")]
    search = {"tool": "search_skills", "args": {"query": ISALIVE}, "result": {"returned": [first.skill_id]}, "ok": True}
    other = _session(
        steps,
        tmp_path,
        "pool",
        "busy",
        "return [th for th in threads if th.isAlive()]",
        "return [th for th in threads if th.is_alive()]",
        "traj-b",
        search,
    )
    assert applied_rule(other, first)
    [second] = HeuristicDistiller().distill([other])
    assert lesson.same_rule(first, second)


def test_a_misspelt_attribute_of_the_users_own_is_still_no_rule(tmp_path) -> None:
    ws = _workspace(
        tmp_path / "ws",
        {
            "cart.py": "class Cart:\n    def __init__(self):\n        self.total = 0\n\n    def checkout(self, n):\n        self.total += n\n"
        },
    )
    names = Names(user={"cart", "n"})
    names.add_workspace_definitions(ws)
    [found] = rewrites("return cart.totl", "return cart.total", names.finish())
    assert not found.is_rule
    [found] = rewrites("return cart.checkout(1)", "return cart.checkout(2)", names)
    assert found.text == "<name>.<name2>(<n>) -> <name>.<name2>(<n>)"


def test_without_the_workspace_an_unknown_attribute_stays_the_users(steps, tmp_path) -> None:
    names = Names(user={"t"})
    [found] = rewrites("return t.isAlive()", "return t.is_alive()", names.finish())
    assert not found.is_rule


def test_an_attribute_defined_in_an_untouched_file_of_the_workspace_is_the_users(tmp_path) -> None:
    ws = _workspace(
        tmp_path / "ws",
        {
            "models.py": "class Job:\n    def isAlive(self):\n        return True\n\n    def is_alive(self):\n        return True\n"
        },
    )
    names = Names(user={"job"})
    names.add_workspace_definitions(ws)
    [found] = rewrites("return job.isAlive()", "return job.is_alive()", names.finish())
    assert not found.is_rule
