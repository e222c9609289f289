"""Record real sessions on the lesson repos, distil two instances per class, look the third one up.

Every instance becomes a git repo in a temp dir. A recorded session goes through the in-memory MCP client exactly
as an agent's would: `run_tests` (the real failure, run by this interpreter), `apply_patch` with the real diff of
the broken and fixed files, `run_tests` again (passing), `record_trajectory(final=true)`. The heuristic distiller
then runs over the recorded trajectories. The third, unseen instance of each class is a fresh session: its
`run_tests` failure gives `suggested_skills`, and its failure message is the `search_skills` query.

- merge precision: of the pairs of recorded trajectories that ended up in one skill, the share from one lesson;
- merge recall: the share of lessons whose two trajectories ended up in exactly one skill;
- first rank: the share of unseen instances whose top hit is their lesson's skill (search and suggestions).
"""

from __future__ import annotations

import difflib
import itertools
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.lessons.classes import Instance, Lesson

SEEN = 2


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "-C", str(repo), *args],
        check=True,
        capture_output=True,
    )


def materialize(root: Path, instance: Instance) -> Path:
    repo = root / instance.repo
    for rel, text in instance.files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", f"https://github.com/bench/{instance.repo}.git")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "broken")
    return repo


def fixing_patch(instance: Instance) -> str:
    parts = []
    for rel, new in instance.fixed.items():
        old = instance.files[rel]
        parts.append("".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{rel}", f"b/{rel}")))
    return "".join(parts)


def settings_for(home: Path, repo: Path, embedder: str, starter: bool) -> Any:
    from mcp_server.settings import Settings

    return Settings(
        home=home, embedder=embedder, starter_skills=starter, workspace=repo, test_python=sys.executable,
        sandbox="local",
    )  # fmt: skip


async def record(settings: Any, patch: str) -> tuple[str, dict[str, Any]]:
    """One fixing session; (trajectory id, the failing run's structured result)."""
    from mcp import Client

    from mcp_server.app import create_server
    from mcp_server.services import build_deps

    deps = build_deps(settings)
    async with Client(create_server(deps)) as client:
        failed = await client.call_tool("run_tests", {})
        applied = await client.call_tool("apply_patch", {"patch": patch})
        passed = await client.call_tool("run_tests", {})
        closed = await client.call_tool("record_trajectory", {"steps": [], "outcome": "success", "final": True})
    if failed.structured_content["status"] == "passed" or passed.structured_content["status"] != "passed":
        raise RuntimeError(f"{settings.workspace}: the recorded session is not a fix ({failed.structured_content})")
    assert applied.structured_content["applied"]
    return closed.structured_content["trajectory_id"], failed.structured_content


async def probe(settings: Any) -> tuple[list[str], list[str], str]:
    """An unseen instance: (suggested skill ids, search_skills ids for its failure message, the query)."""
    from mcp import Client

    from mcp_server.app import create_server
    from mcp_server.services import build_deps

    deps = build_deps(settings)
    async with Client(create_server(deps)) as client:
        failed = (await client.call_tool("run_tests", {})).structured_content
        tests = [t for t in failed["tests"] if t["outcome"] in ("failed", "error")]
        query = (tests[0]["message"] if tests and tests[0].get("message") else failed["output_tail"])[-4000:]
        found = (await client.call_tool("search_skills", {"query": query, "k": 5})).structured_content
        await client.call_tool("record_trajectory", {"steps": [], "outcome": "abandoned", "final": True})
    return [s["skill_id"] for s in failed.get("suggested_skills", [])], [s["skill_id"] for s in found["skills"]], query


@dataclass
class Outcome:
    lessons: list[Lesson]
    owner: dict[str, str] = field(default_factory=dict)
    """trajectory id -> lesson name."""
    skills: dict[str, list[str]] = field(default_factory=dict)
    """skill id -> the recorded trajectories it was learned from."""
    patterns: dict[str, str] = field(default_factory=dict)
    rules: dict[str, str] = field(default_factory=dict)
    search_first: dict[str, bool] = field(default_factory=dict)
    suggest_first: dict[str, bool] = field(default_factory=dict)
    refused: int = 0
    summary: str = ""
    top: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    """lesson -> (top search hits, top suggestions) of its unseen instance."""

    def lesson_of(self, skill_id: str) -> set[str]:
        return {self.owner[t] for t in self.skills.get(skill_id, []) if t in self.owner}

    def precision(self) -> float:
        together = same = 0
        for sources in self.skills.values():
            for a, b in itertools.combinations([s for s in sources if s in self.owner], 2):
                together += 1
                same += self.owner[a] == self.owner[b]
        return same / together if together else 1.0

    def recall(self) -> float:
        good = 0
        for lesson in self.lessons:
            mine = [sid for sid in self.skills if lesson.name in self.lesson_of(sid)]
            good += (
                len(mine) == 1 and len([t for t in self.skills[mine[0]] if self.owner.get(t) == lesson.name]) == SEEN
            )
        return good / len(self.lessons)

    def first(self, lesson: Lesson, ids: list[str]) -> bool:
        return bool(ids) and self.lesson_of(ids[0]) == {lesson.name}


async def run(lessons: list[Lesson], work: Path, *, embedder: str = "hash", starter: bool = True) -> Outcome:
    from mcp_server.services import build_deps, open_bank
    from skills_store.distill.heuristic import HeuristicDistiller
    from skills_store.distill.lesson import rule_line
    from skills_store.distill.runner import distill_pending

    home = work / "home"
    out = Outcome(lessons)
    settings = None
    for lesson in lessons:
        for k, instance in enumerate(lesson.instances[:SEEN]):
            repo = materialize(work / f"{lesson.name.replace(' ', '_')}-{k}", instance)
            settings = settings_for(home, repo, embedder, starter)
            tid, _ = await record(settings, fixing_patch(instance))
            out.owner[tid] = lesson.name
    assert settings is not None
    bank = open_bank(settings)
    try:
        report = distill_pending(build_deps(settings).trajectories, bank, HeuristicDistiller())
        out.refused = len(getattr(report, "refused", []))
        out.summary = report.summary()
        for skill in _all_skills(bank):
            mine = [s for s in skill.sources if s in out.owner]
            if mine:
                out.skills[skill.skill_id] = mine
                out.patterns[skill.skill_id] = skill.pattern
                out.rules[skill.skill_id] = "; ".join(rule_line(r).replace("`", "") for r in skill.rule)
    finally:
        bank.close()
    for lesson in lessons:
        unseen = lesson.instances[SEEN]
        repo = materialize(work / f"{lesson.name.replace(' ', '_')}-unseen", unseen)
        suggested, searched, _ = await probe(settings_for(home, repo, embedder, starter))
        out.top[lesson.name] = (searched[:3], suggested[:3])
        out.search_first[lesson.name] = out.first(lesson, searched)
        out.suggest_first[lesson.name] = out.first(lesson, suggested)
    return out


def _all_skills(bank: Any) -> list[Any]:
    out, offset = [], 0
    while True:
        page = bank.list_skills(limit=100, offset=offset)
        out += page
        if len(page) < 100:
            return out
        offset += 100
