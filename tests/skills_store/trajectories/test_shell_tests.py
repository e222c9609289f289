"""`runs_tests`: a test runner counts where the shell runs it, not where its name is an argument."""

from __future__ import annotations

import pytest

from skills_store.trajectories.shell_tests import runs_tests


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "python -m pytest tests/",
        ".venv/bin/python3.12 -m pytest -x",
        "python -m unittest discover",
        "cd app && pytest 2>&1 | tail -20",
        "uv run pytest -q",
        "uv run --with pytest-xdist pytest -n 4",
        "poetry run pytest",
        "PYTHONPATH=src pytest tests",
        "timeout 300 pytest",
        "sudo -E env CI=1 tox -e py312",
        "npm test",
        "npm run test:unit",
        "pnpm -r test",
        "yarn test --watch=false",
        "npx jest src",
        "bundle exec rspec",
        "go test ./...",
        "cargo nextest run",
        "mvn -q clean test",
        "./gradlew check",
        "make -C sub test",
        "dotnet test",
        "source .venv/bin/activate; pytest",
        "(cd web && npm test)",
        "coverage run -m pytest",
        "py -m pytest",
        'bash -c "cd app && pytest -x"',
        "docker compose exec web pytest -q",
        "docker run --rm -v $PWD:/src img python -m pytest",
        "hatch test",
    ],
)
def test_a_test_run_is_found(command: str) -> None:
    assert runs_tests(command)


@pytest.mark.parametrize(
    "command",
    [
        "pip install pytest pytest-cov",
        "uv add --dev pytest",
        "npm install --save-dev jest",
        "cat pytest.ini",
        "grep -rn pytest pyproject.toml",
        'git commit -m "make the pytest suite pass"',
        "which pytest",
        'echo "run go test later"',
        "ls tests/ && cat tox.ini",
        "rm -rf .pytest_cache",
        "go vet ./...",
        "cargo build",
        "make install",
        "npm run build",
        'grep -E "a|pytest" notes.txt',
        "vim 'unclosed",
        "coverage report",
        'bash -c "pip install tox"',
        "docker build -t pytest-image .",
    ],
)
def test_a_runner_named_as_an_argument_is_no_test_run(command: str) -> None:
    assert not runs_tests(command)
