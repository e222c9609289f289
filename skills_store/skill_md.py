"""Agent Skills (`SKILL.md`) export and import, the format Claude Code, Codex and Cline read.

Each skill becomes a folder `<name>/SKILL.md` (the published Agent Skills rules, agentskills.io/specification):

    ---
    name: nameerror-fix-a-misspelt-or-wrong-name-3fa2b1c0   # [a-z0-9-], <= 64, no leading/trailing/double '-',
    description: ... Use when <pattern>.                    #   equal to the folder; description <= 1024
    metadata:                                               # a map of strings
      skill_id: sk-...
      confidence: "0.70"
      sources: traj-1,traj-2
    ---
    # <title>
    ## When you see
    ## What to do
    ## Evidence

Import reads such folders back: skillbank's own exports return to the same skill (by `metadata.skill_id`), and any
other Agent Skill becomes a skill whose pattern is its "Use when ..." clause (else its description) and whose
strategy is its body. A folder with an invalid SKILL.md imports nothing and names every problem.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from skills_store.errors import InvalidInput
from skills_store.models import Skill
from skills_store.truncate import truncate_text

MAX_NAME = 64
MAX_DESCRIPTION = 1024
ALLOWED_FIELDS = frozenset({"name", "description", "license", "allowed-tools", "metadata", "compatibility"})
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
#: `--for` targets: where each agent looks for project (or user) skills.
TARGETS = {"claude": Path(".claude/skills"), "codex": Path(".agents/skills"), "cline": Path("~/.cline/skills")}
_SECTION_RE = re.compile(r"^## (.+?)\s*$", re.M)
_FENCE_RE = re.compile(r"^```[a-z]*\n(.*?)\n```\s*$", re.S)


def skill_name(skill: Skill) -> str:
    """The folder and frontmatter name: a slug of the title plus 8 hex digits of the id (unique, stable)."""
    suffix = hashlib.sha1(skill.skill_id.encode()).hexdigest()[:8]
    ascii_title = unicodedata.normalize("NFKD", skill.title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    slug = slug[: MAX_NAME - len(suffix) - 1].rstrip("-")
    return f"{slug}-{suffix}" if slug else f"skill-{suffix}"


def _one_line(text: str) -> str:
    # '---' would end the frontmatter for parsers that split on it.
    return re.sub(r"-{3,}", "--", " ".join(text.split()))


def description(skill: Skill) -> str:
    """What the skill does and when to use it, within 1024 characters."""
    what = _one_line(skill.title).rstrip(".") + "."
    when = _one_line(skill.pattern).rstrip(".")
    room = MAX_DESCRIPTION - len(what) - len(" Use when you see: .")
    if len(when) > room:
        when = when[: max(room - 3, 0)].rstrip() + "..."
    return f"{what} Use when you see: {when}."


def render(skill: Skill) -> str:
    """The SKILL.md text of a skill."""
    metadata = {
        "skill_id": skill.skill_id,
        "title": _one_line(skill.title),
        "confidence": f"{skill.confidence:.4f}",
        "prior": f"{skill.prior if skill.prior is not None else skill.confidence:.4f}",
        "successes": str(skill.successes),
        "failures": str(skill.failures),
        "uses": str(skill.uses),
        "sources": ",".join(skill.sources),
        "tags": ",".join(skill.tags),
        "language": skill.language or "",
        "repo": skill.repo or "",
        "generator": "skillbank",
    }
    front = {"name": skill_name(skill), "description": description(skill), "metadata": metadata}
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=False)
    evidence = [
        f"- Confidence {skill.confidence:.2f} (prior {metadata['prior'][:4]}; {skill.successes} successes and "
        f"{skill.failures} failures in sessions that were shown it); shown {skill.uses} times.",
        f"- Learned from: {', '.join(skill.sources) or 'no recorded session'}.",
        f"- Language: {skill.language or '-'}; repo: {skill.repo or '-'}; tags: {', '.join(skill.tags) or '-'}.",
    ]
    pattern = skill.pattern.replace("```", "'''")
    return (
        f"---\n{header}---\n\n# {skill.title}\n\n## When you see\n\n```text\n{pattern}\n```\n\n"
        f"## What to do\n\n{skill.strategy}\n\n## Evidence\n\n" + "\n".join(evidence) + "\n"
    )


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".SKILL.md.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_skills(skills: list[Skill], out_dir: Path) -> list[Path]:
    """Write `<name>/SKILL.md` for every skill under `out_dir` (overwriting earlier exports); returns the files."""
    if out_dir.exists() and not out_dir.is_dir():
        raise InvalidInput(f"{out_dir} is a file; pass a directory to --out")
    written = []
    for skill in skills:
        path = out_dir / skill_name(skill) / "SKILL.md"
        _write_atomic(path, render(skill))
        written.append(path)
    return written


# -- reading and validating -----------------------------------------------------------------------------------


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(frontmatter mapping, body) of a SKILL.md; `InvalidInput` when the frontmatter is missing or not YAML."""
    if not text.startswith("---"):
        raise InvalidInput("SKILL.md must start with YAML frontmatter between '---' lines")
    end = re.search(r"^---\s*$", text[3:], re.M)
    if end is None:
        raise InvalidInput("the frontmatter is not closed with a '---' line")
    try:
        front = yaml.safe_load(text[3 : 3 + end.start()])
    except yaml.YAMLError as exc:
        raise InvalidInput(f"the frontmatter is not valid YAML ({exc})") from None
    if not isinstance(front, dict):
        raise InvalidInput("the frontmatter must be a YAML mapping (name: ..., description: ...)")
    return front, text[3 + end.end() :].strip()


def validate(front: dict[str, Any], folder: str | None) -> list[str]:
    """Every way the frontmatter breaks the Agent Skills rules (empty when it follows them)."""
    problems = []
    extra = sorted(set(front) - ALLOWED_FIELDS)
    if extra:
        problems.append(f"unexpected frontmatter fields {extra}; allowed: {sorted(ALLOWED_FIELDS)}")
    name = front.get("name")
    if not isinstance(name, str) or not name:
        problems.append("`name` is missing or empty")
    else:
        if len(name) > MAX_NAME or not NAME_RE.match(name):
            problems.append(f"`name` {name!r} must be 1-{MAX_NAME} of a-z, 0-9 and single inner hyphens")
        if folder is not None and unicodedata.normalize("NFKC", folder) != name:
            problems.append(f"`name` {name!r} must equal its folder name {folder!r}")
    desc = front.get("description")
    if not isinstance(desc, str) or not desc.strip():
        problems.append("`description` is missing or empty")
    elif len(desc) > MAX_DESCRIPTION:
        problems.append(f"`description` is {len(desc)} characters; at most {MAX_DESCRIPTION}")
    meta = front.get("metadata")
    if meta is not None and (
        not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items())
    ):
        problems.append("`metadata` must be a map of strings to strings")
    return problems


def _sections(body: str) -> dict[str, str]:
    parts = _SECTION_RE.split(body)
    return {parts[i].strip().lower(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _own_sections(body: str) -> dict[str, str]:
    """Sections of a SKILL.md skillbank wrote: the strategy may hold `## ` lines of its own, so cut at the
    first `## What to do` and the last `## Evidence`."""
    head, _, rest = body.partition("\n## What to do\n")
    strategy, _, _ = rest.rpartition("\n## Evidence\n")
    _, _, pattern = head.partition("\n## When you see\n")
    return {"when you see": pattern.strip(), "what to do": (strategy or rest).strip()}


def parse_skill(text: str, folder: str | None = None) -> Skill:
    """The skill a SKILL.md describes; `InvalidInput` listing every problem when it breaks the rules."""
    front, body = split_frontmatter(text)
    problems = validate(front, folder)
    if problems:
        raise InvalidInput("; ".join(problems))
    meta: dict[str, str] = front.get("metadata") or {}
    sections = _own_sections(body) if meta.get("generator") == "skillbank" else _sections(body)
    title_match = re.search(r"^# (.+)$", body, re.M)
    desc = " ".join(front["description"].split())
    when = re.search(r"Use when(?: you see)?:?\s*(.+)$", desc, re.S)
    pattern = sections.get("when you see") or (when.group(1).rstrip(".") if when else desc)
    fenced = _FENCE_RE.match(pattern)
    sources = [x for x in meta.get("sources", "").split(",") if x]
    if not sources and meta.get("generator") != "skillbank":
        sources = [f"skill-md:{front['name']}"]
    fields: dict[str, Any] = {
        "skill_id": meta.get("skill_id") or f"skillmd-{front['name']}",
        "title": title_match.group(1).strip() if title_match else meta.get("title") or front["name"],
        "pattern": truncate_text(fenced.group(1) if fenced else pattern, 4000),
        "strategy": truncate_text(sections.get("what to do") or body or desc, 8000),
        "sources": sources,
        "tags": [t for t in meta.get("tags", "").split(",") if t],
        "language": meta.get("language") or None,
        "repo": meta.get("repo") or None,
    }
    for key in ("confidence", "prior"):
        if meta.get(key):
            fields[key] = float(meta[key])
    for key in ("successes", "failures", "uses"):
        if meta.get(key):
            fields[key] = int(meta[key])
    return Skill.model_validate(fields)


def skill_files(path: Path) -> list[Path]:
    """The SKILL.md files `path` names: a SKILL.md file, a skill folder, or a folder of skill folders."""
    if path.is_file():
        return [path]
    if (path / "SKILL.md").is_file():
        return [path / "SKILL.md"]
    found = sorted(p / "SKILL.md" for p in path.iterdir() if (p / "SKILL.md").is_file()) if path.is_dir() else []
    if not found:
        raise InvalidInput(f"{path}: no SKILL.md there, nor in its sub-folders; pass a skill folder or their parent")
    return found


class SkillFolderImportFailed(InvalidInput):
    """Some SKILL.md files were invalid; nothing was imported. `problems` lists (file, reason)."""

    def __init__(self, path: Path, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        lines = "\n".join(f"  {file}: {reason}" for file, reason in problems)
        super().__init__(f"{path}: {len(problems)} invalid SKILL.md file(s), nothing imported:\n{lines}")


def read_skill_folders(path: Path) -> list[Skill]:
    """Every skill under `path`; `SkillFolderImportFailed` naming each bad file when any is invalid."""
    skills: list[Skill] = []
    problems: list[tuple[str, str]] = []
    seen: dict[str, Path] = {}
    for file in skill_files(path):
        try:
            skill = parse_skill(file.read_text(encoding="utf-8"), file.parent.name)
        except (InvalidInput, ValueError, OSError) as exc:
            problems.append((str(file), str(exc).replace("\n", " ")))
            continue
        if skill.skill_id in seen:
            problems.append((str(file), f"skill_id {skill.skill_id!r} is also in {seen[skill.skill_id]}"))
            continue
        seen[skill.skill_id] = file
        skills.append(skill)
    if problems:
        raise SkillFolderImportFailed(path, problems)
    return skills
