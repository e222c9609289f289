"""HeuristicDistiller on trajectories as the MCP tools and the Claude Code hook store them."""

from __future__ import annotations

from skills_store.distill.heuristic import PITFALL_PRIOR, HeuristicDistiller

KEY_MESSAGE = "KeyError: 'user_id'\n    return payload['user_id']\nE   KeyError: 'user_id'\n\napi.py:7: KeyError"
GET_PATCH = """\
--- a/api.py
+++ b/api.py
@@ -5,3 +5,3 @@ def handler(payload):
 def handler(payload):
     # the user id is optional
-    return payload['user_id']
+    return payload.get('user_id')
"""
IMPORT_PATCH = """\
--- a/report.py
+++ b/report.py
@@ -1,2 +1,3 @@
+import json
 def render(data):
     return json.dumps(data)
"""


def test_a_failure_fixed_by_a_patch_becomes_a_skill_whose_pattern_is_the_error_signature(steps) -> None:
    traj = steps.typo_fix(repo="acme/shop")
    [skill] = HeuristicDistiller().distill([traj])
    assert skill.pattern == "NameError: name '<name>' is not defined"
    assert skill.title == "NameError: fix a misspelt or wrong name"
    assert "rename `itemz` to `items` in `shop.py`" in skill.strategy
    assert "`shop.py` (in `total`)" in skill.strategy
    assert "raised at shop.py:2" in skill.strategy
    assert "+    return sum(i.price for i in items)" in skill.strategy
    assert skill.sources == ["traj-1"]
    assert (skill.language, skill.repo) == ("python", "acme/shop")
    assert {"distilled", "nameerror", "rename", "python"} <= set(skill.tags)


def test_the_heuristic_distiller_finishes_every_trajectory_of_a_batch(steps) -> None:
    result = HeuristicDistiller().distill_batch([steps.typo_fix("t1"), steps.trajectory(tid="t2")])
    assert result.done == ["t1", "t2"]
    assert [s.sources for s in result.drafts] == [["t1"]]


def test_distilling_is_deterministic(steps) -> None:
    first = HeuristicDistiller().distill([steps.typo_fix()])
    second = HeuristicDistiller().distill([steps.typo_fix()])
    keep = {"skill_id", "title", "pattern", "strategy", "confidence", "tags"}
    assert [s.model_dump(include=keep) for s in first] == [s.model_dump(include=keep) for s in second]


def test_the_prior_is_higher_for_a_whole_suite_confirmation_in_a_successful_session(steps) -> None:
    failing = [("tests/test_shop.py::test_total", steps.typo_fix().steps[0].result["failures"][0]["message"])]
    best = steps.typo_fix(outcome="success")
    selected = steps.trajectory(
        steps.run("failed", failing),
        steps.patch(steps.typo_fix().steps[1].args["patch"], ["shop.py"]),
        steps.run("passed", tests=["tests/test_shop.py"]),
        outcome="success",
    )
    failed_session = steps.typo_fix(outcome="failure")
    [a], [b], [c] = (HeuristicDistiller().distill([t]) for t in (best, selected, failed_session))
    assert a.prior == 0.7
    assert b.prior == 0.6
    assert c.prior == 0.55
    assert a.confidence == a.prior


def test_a_fix_that_took_several_failing_runs_starts_with_less_confidence(steps) -> None:
    fix = steps.typo_fix()
    failing, patch, passing = (s.model_dump(exclude={"index", "ts", "kind"}) for s in fix.steps)
    slow = steps.trajectory(failing, dict(failing), dict(failing), patch, passing)
    [quick], [slow_skill] = HeuristicDistiller().distill([fix]), HeuristicDistiller().distill([slow])
    assert slow_skill.prior < quick.prior
    assert "fixed after 3 failing run(s)" in slow_skill.strategy


def test_only_the_failures_that_a_later_run_no_longer_reports_count_as_fixed(steps) -> None:
    key_fail = ("tests/test_api.py::test_handler", KEY_MESSAGE)
    other = ("tests/test_api.py::test_other", "ValueError: bad value\n\napi.py:20: ValueError")
    traj = steps.trajectory(
        steps.run("failed", [key_fail, other]),
        steps.patch(GET_PATCH, ["api.py"]),
        steps.run("failed", [other]),
    )
    skills = {s.pattern: s for s in HeuristicDistiller().distill([traj])}
    skill = skills["KeyError: '<name>'"]
    assert skill.title == "KeyError: replace `<mapping>[...]` with `<mapping>.get(...)`"
    assert "default-value" in skill.tags
    assert "pitfall" in skills["ValueError: bad value"].tags


def test_a_failure_that_disappears_without_any_edit_teaches_nothing(steps) -> None:
    traj = steps.trajectory(steps.run("failed", [("t::a", KEY_MESSAGE)]), steps.run("passed"))
    assert HeuristicDistiller().distill([traj]) == []


def test_a_failure_without_an_error_message_gives_no_skill(steps) -> None:
    traj = steps.trajectory(
        steps.run("failed", [("t::a", "")]), steps.patch(GET_PATCH, ["api.py"]), steps.run("passed")
    )
    assert HeuristicDistiller().distill([traj]) == []


def test_a_run_that_selected_other_tests_does_not_confirm_a_fix(steps) -> None:
    traj = steps.trajectory(
        steps.run("failed", [("tests/test_api.py::test_handler", KEY_MESSAGE)]),
        steps.patch(GET_PATCH, ["api.py"]),
        steps.run("passed", tests=["tests/test_other.py"]),
    )
    assert HeuristicDistiller().distill([traj]) == []


def test_a_repeated_failure_never_fixed_becomes_a_low_confidence_pitfall(steps) -> None:
    failing = [("tests/test_api.py::test_handler", KEY_MESSAGE)]
    traj = steps.trajectory(
        steps.run("failed", failing),
        steps.patch(GET_PATCH, ["api.py"]),
        steps.run("failed", failing),
        outcome="failure",
    )
    [pitfall] = HeuristicDistiller().distill([traj])
    assert pitfall.pattern == "KeyError: '<name>'"
    assert pitfall.confidence == PITFALL_PRIOR
    assert "pitfall" in pitfall.tags
    assert "came back in 2 test runs" in pitfall.strategy
    assert "What did not fix it: supply a default for a missing value" in pitfall.strategy


def test_a_single_unfixed_failure_is_not_a_pitfall(steps) -> None:
    traj = steps.trajectory(steps.run("failed", [("t::a", KEY_MESSAGE)]), outcome="failure")
    assert HeuristicDistiller().distill([traj]) == []


def test_an_added_import_is_recognised(steps) -> None:
    message = "NameError: name 'json' is not defined\n\nreport.py:2: NameError"
    traj = steps.trajectory(
        steps.run("failed", [("tests/test_report.py::test_render", message)]),
        steps.patch(IMPORT_PATCH, ["report.py"]),
        steps.run("passed"),
    )
    [skill] = HeuristicDistiller().distill([traj])
    assert skill.title == "NameError: add `import json`"
    assert skill.strategy.startswith("Rule: add `import json`")
    assert "- added `import json` in `report.py` (traj-1)" in skill.strategy


def test_a_declared_dependency_is_recognised(steps) -> None:
    message = "ModuleNotFoundError: No module named 'yaml'\n\nconfig.py:1: ModuleNotFoundError"
    patch = "--- a/requirements.txt\n+++ b/requirements.txt\n@@ -1 +1,2 @@\n requests==2.32.3\n+PyYAML==6.0.2\n"
    traj = steps.trajectory(
        steps.run("error", [("tests/test_config.py", message)]),
        steps.patch(patch, ["requirements.txt"]),
        steps.run("passed"),
    )
    [skill] = HeuristicDistiller().distill([traj])
    assert skill.pattern == "ModuleNotFoundError: No module named 'yaml'"
    assert "declare `PyYAML==6.0.2` in `requirements.txt`" in skill.strategy


def test_claude_code_bash_and_edit_steps_make_a_skill_too(steps) -> None:
    failing_out = (
        "=== short test summary info ===\nFAILED tests/test_shop.py::test_total - NameError: name 'itemz' is not "
        "defined\n1 failed in 0.05s\n"
    )
    traj = steps.trajectory(
        {"tool": "Bash", "args": {"command": "python -m pytest -q"}, "result": {"is_interrupt": False},
         "ok": False, "content": failing_out},
        {"tool": "Read", "args": {"file_path": "/w/shop.py"}, "result": {"type": "text"}, "ok": True},
        {"tool": "Edit", "args": {"file_path": "/w/shop.py", "old_string": "    return sum(i.price for i in itemz)",
         "new_string": "    return sum(i.price for i in items)"}, "result": {}, "ok": True},
        {"tool": "Bash", "args": {"command": "python -m pytest -q"},
         "result": {"stdout": "3 passed in 0.04s", "stderr": ""}, "ok": True},
        workspace="/w",
        source="claude-code",
    )  # fmt: skip
    [skill] = HeuristicDistiller().distill([traj])
    assert skill.pattern == "NameError: name '<name>' is not defined"
    assert "rename `itemz` to `items` in `shop.py`" in skill.strategy
    assert skill.language == "python"


def test_the_same_signature_fixed_by_one_patch_in_several_tests_is_one_skill(steps) -> None:
    failing = [
        ("t::a", steps.typo_fix().steps[0].result["failures"][0]["message"]),
        ("t::b", "NameError: name 'itemz' is not defined"),
    ]
    traj = steps.trajectory(
        steps.run("failed", failing),
        steps.patch(steps.typo_fix().steps[1].args["patch"], ["shop.py"]),
        steps.run("passed"),
    )
    [skill] = HeuristicDistiller().distill([traj])
    assert "(t::a, t::b)" in skill.strategy


def test_a_batch_reports_every_trajectory_as_done(steps) -> None:
    result = HeuristicDistiller().distill_batch([steps.typo_fix("a"), steps.trajectory(tid="b")])
    assert result.done == ["a", "b"]
    assert [s.sources for s in result.drafts] == [["a"]]


def test_a_shell_command_that_only_names_a_test_runner_is_no_test_run(steps) -> None:
    failing_out = (
        "=== short test summary info ===\nFAILED tests/test_shop.py::test_total - NameError: name 'itemz' is not "
        "defined\n1 failed in 0.05s\n"
    )
    edit = {"tool": "Edit", "args": {"file_path": "/w/shop.py", "old_string": "    return sum(i.price for i in itemz)",
            "new_string": "    return sum(i.price for i in items)"}, "result": {}, "ok": True}  # fmt: skip
    failing = {"tool": "Bash", "args": {"command": "python -m pytest -q"}, "ok": False, "content": failing_out}
    for command in ("pip install pytest-xdist", "cat pytest.ini", 'git commit -m "make test pass"'):
        after = {"tool": "Bash", "args": {"command": command}, "result": {"stdout": "", "stderr": ""}, "ok": True}
        traj = steps.trajectory(failing, edit, after, workspace="/w", source="claude-code")
        assert HeuristicDistiller().distill([traj]) == [], command  # no run showed the edit worked
    passing = {"tool": "Bash", "args": {"command": "cd /w && uv run pytest -q"},
               "result": {"stdout": "3 passed in 0.04s", "stderr": ""}, "ok": True}  # fmt: skip
    [skill] = HeuristicDistiller().distill(
        [steps.trajectory(failing, edit, passing, workspace="/w", source="claude-code")]
    )
    assert skill.pattern == "NameError: name '<name>' is not defined"
