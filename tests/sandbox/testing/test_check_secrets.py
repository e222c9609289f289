"""The syntax check before a run starts its compile child and git without the server's keys and tokens: a test
under the plain local backend (same uid) could read a child's /proc/PID/environ, and git reads the workspace's own
config, which such a test may have written."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandbox.testing.reward import IN_PROCESS_BYTES, check_syntax

SECRETS = {
    "OPENAI_API_KEY": "sk-fake-openai-3d4c",
    "SKILLBANK_TOKEN": "sb-fake-token-1f2e",
    "DATABASE_URL": "postgres://app:pw-fake-5e6f@db/app",  # a secret by its value, not its name
}


@pytest.fixture
def envs(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[dict[str, str]]]:
    """The environments the check's child processes were started with, by program ("python", "git")."""
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    seen: dict[str, list[dict[str, str]]] = {"python": [], "git": []}
    popen = subprocess.Popen

    class Spy(popen):  # type: ignore[valid-type, misc]
        def __init__(self, args: list[str], *rest: Any, **kwargs: Any) -> None:
            program = "git" if Path(args[0]).name == "git" else "python"
            seen[program].append(dict(kwargs.get("env") or {}))
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Spy)
    return seen


def test_the_compile_child_and_git_get_none_of_the_servers_secrets(
    make_workspace, envs: dict[str, list[dict[str, str]]]
) -> None:
    ws = make_workspace({"app.py": "x = 1\n"})
    big = "".join(f"value_{i} = {i}\n" for i in range(IN_PROCESS_BYTES // 12)) + "def broken(:\n"
    (ws / "big.py").write_text(big)
    assert len(big) > IN_PROCESS_BYTES
    for started in envs.values():
        started.clear()  # the workspace's own git commands

    report = check_syntax(ws, budget_s=30)

    assert [(p.path, p.line) for p in report.problems] == [("big.py", big.count("\n"))]
    assert envs["python"]
    assert envs["git"]
    for env in envs["python"] + envs["git"]:
        assert "PATH" in env
        assert not set(env) & set(SECRETS)
        assert not set(env.values()) & set(SECRETS.values())
