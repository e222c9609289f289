"""Typed step summaries: what the tools write is what the distiller reads, and old stored steps still read."""

from __future__ import annotations

from datetime import UTC, datetime

from skills_store.distill.episodes import Edit, TestRun, events
from skills_store.models import StoredStep, Trajectory
from skills_store.trajectories.summaries import FileChange, PatchSummary, RecordSummary, TestRunSummary

PATCH = "--- a/my file.py\n+++ b/my file.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def trajectory(*steps: dict) -> Trajectory:
    now = datetime.now(UTC)
    stored = [StoredStep(index=i, ts=now, kind="tool_call", **s) for i, s in enumerate(steps)]
    return Trajectory(trajectory_id="traj-s", status="closed", steps=stored)


def test_a_patch_summary_round_trips_through_its_stored_form() -> None:
    summary = PatchSummary(applied=True, files=[FileChange(action="add", path="new dir/a.py")], syntax_errors=1)
    stored = summary.model_dump(mode="json")
    assert stored["files"] == [{"action": "add", "path": "new dir/a.py"}]
    assert PatchSummary.read(stored) == summary


def test_an_old_action_path_string_still_reads_with_spaces_in_the_path() -> None:
    old = {"applied": True, "files": ["modify my file.py", "rename b.py"], "fuzzy": True, "syntax_errors": 0}
    summary = PatchSummary.read(old)
    assert summary is not None
    assert [(f.action, f.path) for f in summary.files] == [("modify", "my file.py"), ("rename", "b.py")]
    assert summary.fuzzy


def test_results_an_agent_made_up_read_as_empty_fields_or_none() -> None:
    odd = TestRunSummary.read({"status": "failed", "failures": 5, "failing": "x", "passed": "many"})
    assert odd is not None
    assert (odd.failures, odd.failing, odd.passed) == ([], [], 0)
    assert TestRunSummary.read({"status": "sleeping"}) is None
    assert TestRunSummary.read("passed") is None
    assert PatchSummary.read(["applied"]) is None
    assert RecordSummary.read({"used_skills": ["sk-1"]}).used_skills == ["sk-1"]


def test_the_distiller_reads_old_and_new_patch_steps_alike() -> None:
    run = {"status": "failed", "failures": [{"id": "t.py::test_x", "message": "AssertionError"}], "failing": []}
    new = PatchSummary(applied=True, files=[FileChange(action="modify", path="my file.py")]).model_dump(mode="json")
    old = {"applied": True, "files": ["modify my file.py"], "fuzzy": False, "syntax_errors": 0}
    for result in (new, old):
        found = events(
            trajectory(
                {"tool": "run_tests", "args": {"tests": None}, "result": run, "ok": False},
                {"tool": "apply_patch", "args": {"patch": PATCH, "dry_run": False}, "result": result, "ok": True},
            )
        )
        assert isinstance(found[0], TestRun)
        assert found[0].failures[0].test_id == "t.py::test_x"
        assert isinstance(found[1], Edit)
        assert found[1].files == ["my file.py"]
