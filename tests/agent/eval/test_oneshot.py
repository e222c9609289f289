"""The one-shot solver: one prompt (failure, files, skills), N sampled answers, the best by run_tests reward."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent.eval.oneshot import OneShotConfig, OneShotSolver
from agent.eval.solver import SolveContext
from agent.tasks.grading import fresh_copy, grade_patch
from agent.tasks.model import TaskFolder, load_tasks
from skills_store.models import Skill
from tests.agent.eval.conftest import PYTHON

SKILL = Skill(skill_id="sk-0123456789abcdef", title="Guard empty input", pattern="AssertionError: assert",
              strategy="Restore the guard clause.")  # fmt: skip


def scripted(answers: list[str], prompts: list[str]) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts.append(str(messages[-1].parts[-1].content))  # type: ignore[union-attr]
        return ModelResponse(parts=[TextPart(answers[len(prompts) - 1])])

    return FunctionModel(respond)


def reverse_gold(tf: TaskFolder) -> tuple[str, str]:
    """(path, SEARCH/REPLACE answer that applies the gold patch) for a one-line fix."""
    lines = tf.gold_patch.splitlines()
    path = lines[0].removeprefix("--- a/")
    removed = [line[1:] for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")]
    search = "\n".join(removed)
    return path, f"{path}\n<<<<<<< SEARCH\n{search}\n=======\n" + "\n".join(added) + "\n>>>>>>> REPLACE\n"


def solve(tf: TaskFolder, answers: list[str], prompts: list[str], *, use_skills: bool):  # type: ignore[no-untyped-def]
    solver = OneShotSolver(scripted(answers, prompts), OneShotConfig(candidates=len(answers), test_python=PYTHON),
                           skills=lambda queries: [SKILL])  # fmt: skip
    try:
        with fresh_copy(tf) as ws:
            return solver.solve(SolveContext(tf, ws, use_skills, "heldout", 0, 0))
    finally:
        solver.close()


def one_line_task(tasks: Path) -> TaskFolder:
    return next(tf for tf in load_tasks(tasks) if tf.task.bug_class in ("comparison_flip", "wrong_return"))


def test_best_of_three_keeps_the_right_fix_over_a_wrong_one_and_a_syntax_error(small_tasks: Path) -> None:
    tf = one_line_task(small_tasks)
    path, right = reverse_gold(tf)
    search = right.split("<<<<<<< SEARCH\n", 1)[1].split("\n=======", 1)[0]
    wrong = f"{path}\n<<<<<<< SEARCH\n{search}\n=======\n{search}  # unchanged\n>>>>>>> REPLACE\n"
    broken = f"{path}\n<<<<<<< SEARCH\n{search}\n=======\n    def (:\n>>>>>>> REPLACE\n"
    prompts: list[str] = []
    result = solve(tf, [wrong, right, broken], prompts, use_skills=False)
    assert result.candidates == 3
    assert result.best_reward == 1.0
    assert grade_patch(tf, result.patch, test_python=PYTHON).resolved
    assert tf.task.fail_to_pass[0].split("::")[-1] in prompts[0]
    assert f"### {path}" in prompts[0]


def test_skills_reach_the_prompt_only_in_the_skills_condition(small_tasks: Path) -> None:
    tf = one_line_task(small_tasks)
    with_skills: list[str] = []
    solve(tf, ["no idea"], with_skills, use_skills=True)
    without: list[str] = []
    result = solve(tf, ["no idea"], without, use_skills=False)
    assert SKILL.skill_id in with_skills[0]
    assert SKILL.skill_id not in without[0]
    assert result.patch == ""
    assert result.input_tokens > 0
