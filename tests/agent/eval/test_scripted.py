"""`scripted:` models answer the task their prompt's header names, whatever other tasks its skills block mentions."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from pydantic_ai import Agent

from agent.eval.oneshot import OneShotConfig, OneShotSolver, build_prompt
from agent.eval.scripted import scripted_model
from agent.eval.solver import SolveContext
from agent.prompt import user_prompt
from agent.tasks.grading import fresh_copy, grade_patch
from agent.tasks.model import TaskFolder, load_tasks
from skills_store.models import Skill
from tests.agent.eval.conftest import PYTHON


def learned_on(others: list[TaskFolder]) -> Skill:
    """A skill distilled from one-shot training attempts: its sources and examples name those tasks' trajectories."""
    sources = [f"eval-r1-train-skills-{tf.task.task_id}-0" for tf in others]
    return Skill(skill_id="sk-0123456789abcdef", title="Restore the operator", pattern="AssertionError: assert",
                 strategy="Put the operator back.\nExamples: " + ", ".join(sources), sources=sources)  # fmt: skip


def answer(spec: str, tasks: dict[str, TaskFolder], prompt: str) -> str:
    agent = Agent(scripted_model(spec, tasks))
    return anyio.run(agent.run, prompt).output  # `run_sync` would leave an event loop open


@pytest.fixture
def tasks(small_tasks: Path) -> dict[str, TaskFolder]:
    return {tf.task.task_id: tf for tf in load_tasks(small_tasks)}


@pytest.mark.parametrize("spec", ["scripted:gold", "scripted:skills"])
def test_a_one_shot_prompt_whose_skills_name_other_tasks_gets_its_own_gold_patch(
    tasks: dict[str, TaskFolder], spec: str
) -> None:
    for task_id, tf in tasks.items():
        skill = learned_on([other for other in tasks.values() if other is not tf])
        prompt = build_prompt(SolveContext(tf, tf.repo, True, "heldout", 0, 0), [], [skill], 24_000)
        assert prompt.startswith(f"Task {task_id}:\n")
        assert f"```diff\n{tf.gold_patch}```" in answer(spec, tasks, prompt), task_id


def test_an_agentic_prompt_whose_skills_name_other_tasks_gets_its_own_gold_patch(
    tasks: dict[str, TaskFolder],
) -> None:
    for task_id, tf in tasks.items():
        others = [f"eval-r1-train-skills-{t}-0" for t in tasks if t != task_id]
        skill = {"skill_id": "sk-0123456789abcdef", "title": "t", "pattern": "p", "strategy": "s", "sources": others}
        prompt = user_prompt(f"Task {task_id}:\n{tf.task.problem_statement}", None, [skill])
        assert f"```diff\n{tf.gold_patch}```" in answer("scripted:gold", tasks, prompt), task_id


def test_a_prompt_without_a_task_header_is_searched_for_a_task_id(tasks: dict[str, TaskFolder]) -> None:
    task_id, tf = next(iter(tasks.items()))
    assert f"```diff\n{tf.gold_patch}```" in answer("scripted:gold", tasks, f"please fix {task_id}")
    assert answer("scripted:gold", tasks, "please fix Task nope:\nit") == "I could not find the bug."


def test_a_held_out_task_shown_skills_from_other_tasks_is_resolved_by_its_own_gold_patch(
    tasks: dict[str, TaskFolder],
) -> None:
    """The eval's with-skills condition: `scripted:gold` must resolve every held-out task, as without skills."""
    for tf in tasks.values():
        skill = learned_on([other for other in tasks.values() if other is not tf])
        solver = OneShotSolver(scripted_model("scripted:gold", tasks), OneShotConfig(candidates=1, test_python=PYTHON),
                               skills=lambda queries, skill=skill: [skill])  # fmt: skip
        try:
            with fresh_copy(tf) as ws:
                result = solver.solve(SolveContext(tf, ws, True, "heldout", 0, 0))
        finally:
            solver.close()
        assert result.skills_shown == [skill.skill_id]
        assert result.patch
        assert grade_patch(tf, result.patch, test_python=PYTHON).resolved, tf.task.task_id
