"""Errors of the skill and trajectory stores, split by who must act."""


class SkillStoreError(Exception):
    """Base class for every error raised by `skills_store`."""


class ConfigError(SkillStoreError):
    """The operator misconfigured something (bad data dir, unreachable Chroma URL); raised at startup."""


class StoreUnreachable(SkillStoreError):
    """The Chroma server (`SKILLBANK_CHROMA_URL`) did not answer a call made after the store opened."""


class InvalidInput(SkillStoreError):
    """The caller (often a model) passed something it can fix; the message says what to change."""


class NotFound(InvalidInput):
    """An id that does not exist (skill, trajectory)."""


class ImportFailed(InvalidInput):
    """An import file had invalid lines; nothing was imported. `problems` lists (line number, reason)."""

    def __init__(self, path: str, problems: list[tuple[int, str]]) -> None:
        self.path = path
        self.problems = problems
        lines = "\n".join(f"  line {n}: {reason}" for n, reason in problems)
        super().__init__(f"{path}: {len(problems)} invalid line(s), nothing imported:\n{lines}")
