"""Whether a shell command line runs a test suite: `runs_tests("cd app && uv run pytest -q")`.

A test runner counts only where the shell would run it: the head of a simple command (after `&&`, `||`, `;`, `|`,
`(` or a line break), past variable assignments and wrappers (`sudo`, `env`, `time`, `timeout 60`, `uv run`,
`poetry run`, `npx`, `bundle exec`, `python -m`, `coverage run -m`, ...), inside `bash -c "..."`, or as the command
of `docker run|exec` and `docker compose run|exec`. A runner's name anywhere else is an argument, not a test run:
`pip install pytest`, `cat pytest.ini`, `grep -rn jest src`, `git commit -m "make test pass"`.
"""

from __future__ import annotations

import re
import shlex

#: Programs that are a test run by themselves (`pytest -q`, `.venv/bin/pytest`, `python -m pytest`).
RUNNERS = frozenset(
    {"pytest", "py.test", "tox", "nox", "unittest", "rspec", "jest", "vitest", "phpunit", "ctest", "mocha", "ava"}
)
#: Programs whose subcommand (first word that is not an option) makes the run a test run.
SUBCOMMANDS = {
    "npm": {"test", "t"},
    "pnpm": {"test", "t"},
    "yarn": {"test"},
    "bun": {"test"},
    "go": {"test"},
    "cargo": {"test", "nextest", "t"},
    "dotnet": {"test"},
    "deno": {"test"},
}
#: `npm run test` and kin: the script named after `run`.
RUN_SCRIPTS = frozenset({"npm", "pnpm", "yarn", "bun"})
#: Build tools whose goals may come after others (`mvn clean test`, `make -j4 check`).
GOALS = {
    "mvn": {"test", "verify"},
    "mvnw": {"test", "verify"},
    "gradle": {"test", "check"},
    "gradlew": {"test", "check"},
    "make": {"test", "check"},
}
#: Words that run the rest of the line as a command.
PREFIXES = frozenset({"sudo", "env", "time", "nice", "command", "exec", "nohup", "xvfb-run", "npx", "bunx"})
#: Two-word prefixes that do the same (`uv run pytest`, `bundle exec rspec`).
PREFIX_PAIRS = frozenset(
    {
        ("uv", "run"),
        ("poetry", "run"),
        ("pipenv", "run"),
        ("pdm", "run"),
        ("hatch", "run"),
        ("rye", "run"),
        ("pixi", "run"),
        ("bundle", "exec"),
        ("pnpm", "exec"),
        ("pnpm", "dlx"),
        ("yarn", "dlx"),
        ("npm", "exec"),
    }
)
_SEPARATORS_RE = re.compile(r"&&|\|\||[;|&\n()`]|\$\(")
_ASSIGNMENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON_RE = re.compile(r"^(?:python|pypy)(?:\d+(?:\.\d+)?)?$|^py$")
#: Shells whose `-c` argument is a command line of its own.
SHELLS = frozenset({"sh", "bash", "zsh", "dash"})
#: Container tools that run a command given after their own options and the container or image name.
CONTAINERS = frozenset({"docker", "podman"})
_DURATION_RE = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment)
    except ValueError:  # an unclosed quote: the words as they stand
        return segment.split()


def _name(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _head(words: list[str]) -> list[str]:
    """The words from the program that actually runs: assignments and wrappers dropped."""
    i = 0
    while i < len(words):
        name = _name(words[i])
        if _ASSIGNMENT_RE.match(words[i]):
            i += 1
        elif name in PREFIXES and i + 1 < len(words):
            i += 1
            while i + 1 < len(words) and words[i].startswith("-"):  # `sudo -E`, `env -i`
                i += 1
        elif name == "timeout" and i + 1 < len(words):
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
            i += 1 if i < len(words) and _DURATION_RE.match(words[i]) else 0
        elif i + 1 < len(words) and (name, words[i + 1]) in PREFIX_PAIRS:
            i += 2
            while i < len(words) and words[i].startswith("-"):  # `uv run --with x pytest`: options of the wrapper
                i += 1 + (words[i] in ("--with", "--package", "--group", "--extra") and i + 1 < len(words))
        else:
            break
    return words[i:]


def _simple_runs_tests(words: list[str]) -> bool:
    words = _head(words)
    if not words:
        return False
    name = _name(words[0])
    args = [w for w in words[1:] if not w.startswith("-")]
    if _PYTHON_RE.match(name) and len(words) > 2 and words[1] == "-m":
        return words[2] in RUNNERS
    if name == "coverage" and args[:1] == ["run"]:  # `coverage run -m pytest`, `coverage run runtests.py`
        rest = words[words.index("run") + 1 :]
        return len(rest) > 1 and rest[0] == "-m" and rest[1] in RUNNERS
    if name in SHELLS and "-c" in words[1:-1]:
        return runs_tests(words[words.index("-c") + 1])
    if name in CONTAINERS and ({"run", "exec"} & set(args[:2])):  # `docker compose exec app pytest`
        return any(_simple_runs_tests(words[j:]) for j in range(2, len(words)))
    if name == "hatch" and args[:1] == ["test"]:
        return True
    if name in RUNNERS:
        return True
    if name in SUBCOMMANDS and args:
        if args[0] in SUBCOMMANDS[name]:
            return True
        return name in RUN_SCRIPTS and args[0] == "run" and len(args) > 1 and args[1].split(":")[0] == "test"
    if name in GOALS:
        return any(a in GOALS[name] for a in args)
    return False


def runs_tests(command: str) -> bool:
    """Whether any simple command of the line runs a test suite (see the module doc)."""
    return any(_simple_runs_tests(_words(segment)) for segment in _SEPARATORS_RE.split(command))
