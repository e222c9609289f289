"""`skillbank demo`: the whole loop, offline, on the bundled sample repository.

A scripted agent (no LLM: its patches are written in advance) works two sessions against the real server,
spawned over stdio exactly as Claude Code would spawn it:

1. It runs the tests of the catalog loader, which fail; the failures come back with suggested skills from the
   starter pack; it fixes the bug with a unified diff, the tests pass, and it closes the session as a success.
2. The heuristic distiller turns that trajectory into a skill.
3. A second session hits a similar failure in another module: `run_tests` now suggests the lesson the first
   session earned. The agent fixes it with a Codex-style patch and succeeds, and the learned skill's
   confidence rises because it was shown to a successful session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from rich.console import Console

from mcp_server.settings import Settings

SAMPLE = Path(__file__).with_name("sample_repo")

FIX_CATALOG = """\
--- a/inventory/catalog.py
+++ b/inventory/catalog.py
@@ -8,6 +8,7 @@ def load_catalog(text):
     \"\"\"Map each SKU to its price, from CSV text with a header row.\"\"\"
     catalog = {}
     for row in csv.DictReader(io.StringIO(text)):
+        row = {key.strip().lower(): value for key, value in row.items()}
         catalog[row["sku"]] = float(row["price"])
     return catalog
"""

FIX_ORDERS = """\
*** Begin Patch
*** Update File: inventory/orders.py
@@ def order_total(text, catalog):
     for row in csv.DictReader(io.StringIO(text)):
+        row = {key.strip().lower(): value for key, value in row.items()}
         total += int(row["qty"]) * catalog[row["sku"]]
*** End Patch
"""


def prepare_workspace(target: Path) -> Path:
    shutil.copytree(SAMPLE, target)
    if shutil.which("git"):
        git = ["git", "-c", "user.name=demo", "-c", "user.email=demo@example.invalid"]
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "sample repo"]):
            subprocess.run([*git, *args], cwd=target, check=True, capture_output=True)
    return target


def server_params(home: Path, workspace: Path) -> StdioServerParameters:
    env = {**os.environ, "SKILLBANK_HOME": str(home), "SKILLBANK_TEST_PYTHON": sys.executable}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_server", "serve", "--workspace", str(workspace)], env=env
    )


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    if result.is_error:
        text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
        raise RuntimeError(f"{tool} was refused: {text}")
    return result.structured_content or {}


class Narrator:
    def __init__(self, console: Console) -> None:
        self.out = console

    def step(self, text: str) -> None:
        self.out.print(f"  [bold cyan]->[/] {text}")

    def tests(self, run: dict[str, Any]) -> None:
        colour = "green" if run["status"] == "passed" else "red"
        self.step(
            f"run_tests: [{colour}]{run['status'].upper()}[/] {run['passed']} passed, {run['failed']} failed, "
            f"{run['errors']} errors (reward {run['reward']['value']:.2f}, {run['backend']})"
        )
        for case in run["tests"]:
            if case["outcome"] in ("failed", "error"):
                message = (case["message"] or "").splitlines()[0][:100]
                self.out.print(f"       {case['id']}: {message}", markup=False)
        self.skills("suggested_skills", run.get("suggested_skills") or [])

    def skills(self, label: str, skills: list[dict[str, Any]]) -> None:
        if not skills:
            return
        self.out.print(f"     {label}:")
        for s in skills:
            origin = ", ".join(s["sources"][:2])
            self.out.print(
                f"       [{s['skill_id']}] {s['title']} (relevance {s.get('relevance', 0):.2f}, confidence "
                f"{s['confidence']:.2f}, from {origin})",
                markup=False,
            )


async def session(
    narrator: Narrator, home: Path, workspace: Path, *, task: str, tests: list[str], patch: str
) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    """One agent session; returns its trajectory id, the failing run (with its suggested skills) and the skills
    search_skills returned for the failure."""
    async with Client(server_params(home, workspace)) as client:
        failing = await call(client, "run_tests", {"tests": tests, "timeout_s": 120})
        narrator.tests(failing)
        first_failure = next(t for t in failing["tests"] if t["outcome"] in ("failed", "error"))
        found = await call(client, "search_skills", {"query": first_failure["message"] or task, "k": 3})
        narrator.step(f"search_skills (the failure message): {len(found['skills'])} skills in {found['took_ms']} ms")
        narrator.skills("best matches", found["skills"])
        applied = await call(client, "apply_patch", {"patch": patch})
        files = ", ".join(f"{f['action']} {f['path']} ({f['hunks']} hunk)" for f in applied["files"])
        narrator.step(f"apply_patch: applied={applied['applied']}: {files}")
        passing = await call(client, "run_tests", {"tests": tests, "timeout_s": 120})
        narrator.tests(passing)
        outcome = "success" if passing["status"] == "passed" else "failure"
        closed = await call(
            client,
            "record_trajectory",
            {
                "task": task,
                "outcome": outcome,
                "final": True,
                "steps": [{"kind": "thought", "content": "CSV headers differ in case from the keys the code uses."}],
            },
        )
        narrator.step(
            f"record_trajectory(final=true, outcome={outcome}): trajectory {closed['trajectory_id']} "
            f"{closed['status']} with {closed['total_steps']} steps (the tool calls were captured automatically)"
        )
        return closed["trajectory_id"], failing, found["skills"]


def distill(settings: Settings, narrator: Narrator) -> list[str]:
    from mcp_server.services import open_bank
    from skills_store.distill.heuristic import HeuristicDistiller
    from skills_store.distill.runner import distill_pending
    from skills_store.trajectories.store import SQLiteTrajectoryStore

    with SQLiteTrajectoryStore(settings.home / "trajectories.db") as store, open_bank(settings) as bank:
        report = distill_pending(store, bank, HeuristicDistiller())
        narrator.step(report.summary())
        for skill_id in report.added:
            skill = bank.get(skill_id)
            narrator.out.print(
                f"       [{skill.skill_id}] {skill.title}\n         when you see: {skill.pattern}\n"
                f"         do: {skill.strategy[:300]}\n         confidence {skill.confidence:.2f}, "
                f"sources {', '.join(skill.sources)}",
                markup=False,
            )
        return report.added


def confidence_of(settings: Settings, skill_ids: list[str]) -> dict[str, float]:
    from skills_store.catalog import Catalog

    with Catalog(settings.home / "catalog.db", readonly=True) as catalog:
        return {s.skill_id: s.confidence for s in catalog.get(skill_ids)}
