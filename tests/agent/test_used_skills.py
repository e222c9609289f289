"""The bundled agent reports the skills it applied: ids named in the final answer, among those it was shown,
become `used_skills` of its closing `record_trajectory` call (only those skills' confidence moves)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import anyio
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent.prompt import instructions, used_skills
from agent.run import solve
from agent.server import ServerCommand
from tests.agent.support import FIX, scripted

pytestmark = [pytest.mark.anyio]

SKILLS = [
    # The failure's error line fits this pattern's template: the lesson is relevant to it, and reaches the prompt.
    ("sk-add", "Arithmetic operator swapped", "AssertionError: assert <n> == <n>"),
    ("sk-float", "Exact equality on floats", "AssertionError: assert <x> == <y> for floating-point results"),
    ("sk-keyerror", "Missing dict key", "KeyError: '<name>'"),
]


def seed(server: ServerCommand, tmp_path: Path, skills: list[tuple[str, str, str]] = SKILLS) -> None:
    lines = [
        json.dumps({"skill_id": sid, "title": title, "pattern": pattern, "strategy": "Check the operator.",
                    "confidence": 0.5, "tags": ["python"], "language": "python", "sources": ["t-1"]})
        for sid, title, pattern in skills
    ]  # fmt: skip
    path = tmp_path / "skills.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = subprocess.run([server.command, "skills", "import", str(path)], env=dict(server.env), capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr


def bank_ids(server: ServerCommand) -> list[str]:
    out = subprocess.run([server.command, "skills", "list"], env=dict(server.env), capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    return [line.split("\t", 1)[0] for line in out.stdout.splitlines() if line.strip()]


def recorded_used(trajectory: dict) -> list[str]:
    """What the closing call named: the `used_skills` step the server stores."""
    return [
        skill
        for step in trajectory["steps"]
        if step.get("tool") == "record_trajectory"
        for skill in (step.get("args") or {}).get("used_skills") or []
    ]


def test_the_answer_line_names_skills_and_only_shown_ones_count() -> None:
    shown = ["sk-a", "sk-b", "sk-c"]
    assert used_skills("Fixed it.\nUsed skills: sk-b, SK-A, sk-zz.", shown) == ["sk-b", "sk-a"]
    assert used_skills("Fixed.\n**Used skills:** `sk-c`", shown) == ["sk-c"]
    assert used_skills("Fixed.\nUsed skills: none", shown) == []
    assert used_skills("I looked at sk-a but it did not apply.", shown) == []
    assert used_skills("Used skills: sk-a\nOn second thought:\nUsed skills: sk-b", shown) == ["sk-b"]


def test_a_used_skills_label_followed_by_a_list_names_the_listed_skills() -> None:
    # models write the label, then a markdown list: the ids on the lines below counted for nothing (no credit, no
    # confidence move for a skill the model says it applied)
    shown = ["sk-a", "sk-b", "sk-c"]
    assert used_skills("Fixed.\n\n**Used skills:**\n- `sk-b`: the off-by-one\n- SK-A\n\nDone.", shown) == [
        "sk-b",
        "sk-a",
    ]
    assert used_skills("Fixed.\nUsed skills:\n1. sk-c\n2) sk-a", shown) == ["sk-c", "sk-a"]
    assert used_skills("Fixed.\nUsed skills:\n  * sk-b", shown) == ["sk-b"]
    # only the list right under the label: a later paragraph mentioning a skill is not part of it
    assert used_skills("Used skills:\n- none\n\nI read sk-a first.", shown) == []
    assert used_skills("Used skills:\nI read sk-a but it did not help.", shown) == []


def test_only_the_skills_run_asks_the_model_to_name_its_skills() -> None:
    assert "Used skills:" in instructions(use_skills=True)
    assert "Used skills" not in instructions(use_skills=False)
    assert "search_skills" not in instructions(use_skills=False)


async def test_a_session_shown_several_skills_records_exactly_the_one_its_answer_names(
    buggy_repo: Path, server: ServerCommand, trajectories, tmp_path: Path
) -> None:
    seed(server, tmp_path)
    model = scripted([
        [("search_skills", {"query": "assert -1 == 5 where -1 = add(2, 3)", "k": 50})],
        [("apply_patch", {"patch": FIX})],
        [("run_tests", {})],
        "add subtracted; it adds now.\nUsed skills: sk-add, sk-made-up",
    ])  # fmt: skip
    with anyio.fail_after(120):
        result = await solve("make test_add pass", buggy_repo, model, server=server)
    assert result.outcome == "success"
    assert {"sk-add", "sk-float", "sk-keyerror"} <= set(result.skills_shown)
    assert result.used_skills == ["sk-add"]
    [traj] = trajectories()
    assert traj["status"] == "closed"
    assert recorded_used(traj) == ["sk-add"]


async def test_a_skill_from_the_prompt_counts_as_shown(
    buggy_repo: Path, server: ServerCommand, trajectories, tmp_path: Path
) -> None:
    # A bank where the lesson for test_add's failure stands out: its relevance reaches the suggestion threshold.
    seed(server, tmp_path, [s for s in SKILLS if s[0] != "sk-float"])
    named: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = str(messages[0].parts[-1].content)
        named.extend(re.findall(r"^- \[([^\]]+)\]", prompt, re.MULTILINE)[:1])
        return ModelResponse(parts=[TextPart("nothing changed.\nUsed skills: " + ", ".join(named))])

    with anyio.fail_after(120):
        result = await solve("make test_add pass", buggy_repo, FunctionModel(respond), server=server)
    assert named == ["sk-add"]
    assert result.used_skills == named
    assert recorded_used(trajectories()[0]) == named


async def test_an_id_the_model_was_never_shown_is_dropped(
    buggy_repo: Path, server: ServerCommand, trajectories, tmp_path: Path
) -> None:
    seed(server, tmp_path)
    bank = bank_ids(server)
    named: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:  # see exactly one skill, by a search for it
            return ModelResponse(parts=[ToolCallPart("search_skills", {"query": "Missing dict key", "k": 1})])
        # Name the one it found, and every skill of the bank the prompt did not show.
        prompt = str(messages[0].parts[-1].content)
        [found] = [p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        [hit] = [h["skill_id"] for h in found["skills"]]  # type: ignore[index]
        named.extend([hit, *[sid for sid in bank if sid != hit and f"[{sid}]" not in prompt]])
        return ModelResponse(parts=[TextPart("nothing changed.\nUsed skills: " + ", ".join(named))])

    with anyio.fail_after(120):
        result = await solve("make test_add pass", buggy_repo, FunctionModel(respond), server=server)
    assert len(named) > 2  # one shown, the rest of the bank never shown
    assert result.used_skills == [named[0]]
    [traj] = trajectories()
    assert recorded_used(traj) == [named[0]]


async def test_no_skills_records_no_used_skills(
    buggy_repo: Path, server: ServerCommand, trajectories, tmp_path: Path
) -> None:
    seed(server, tmp_path)
    model = scripted([[("apply_patch", {"patch": FIX})], [("run_tests", {})], "fixed.\nUsed skills: sk-add"])
    with anyio.fail_after(120):
        result = await solve("make test_add pass", buggy_repo, model, server=server, use_skills=False)
    assert result.outcome == "success"
    assert result.skills_shown == []
    assert result.used_skills == []
    [traj] = trajectories()
    assert recorded_used(traj) == []
