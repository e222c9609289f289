# ruff: noqa: E501
"""Screening distilled skills before they are stored (skill poisoning).

A skill is text that other agents will read and may act on, learned from sessions anyone could have steered. A
hostile session can make its "fix" download and run code, switch tests off, or read credentials, and a distiller
would faithfully turn that into advice. Every draft is screened before it is merged into the bank; a draft that
tells an agent to do any of these is refused with the reason, and the pass reports it:

- run code fetched from the network: `curl ... | sh`, `wget -O- ... | bash`, `pip install` from a URL or git,
  `eval`/`exec` of downloaded or base64-decoded text, `python -c` with `urllib`/`requests`;
- disable, skip, delete or weaken tests: `@pytest.mark.skip`, `pytest.skip(`, `--deselect`, `-k "not ..."`,
  `xfail` markers added, `rm tests/...`, `unittest.skip`, `addopts` that ignore tests, a rule that removes an
  assertion or a test function (`assert f(x) == 3` -> nothing), an `assert True`;
- touch credentials: `~/.ssh`, `id_rsa`, `.aws/credentials`, `.netrc`, `.pypirc`, `.git-credentials`, keychains,
  printing or sending the environment, reading `*_TOKEN`/`*_SECRET`/`*_KEY` variables.

Secrets themselves never reach a skill: the text is passed through the `Redactor` first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from skills_store.models import Skill
from skills_store.redact import Redactor

_FLAGS = re.IGNORECASE
RULES: list[tuple[str, re.Pattern[str]]] = [
    ("runs remote code", re.compile(r"\b(?:curl|wget|fetch)\b[^\n|;]*\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b", _FLAGS)),
    ("runs remote code", re.compile(r"\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)\b", _FLAGS)),
    ("runs remote code", re.compile(r"\bpip3?\s+install\b[^\n]*?(?:https?://|git\+|--index-url|--extra-index-url|-i\s+http)", _FLAGS)),
    ("runs remote code", re.compile(r"\b(?:eval|exec)\s*\([^\n]*(?:urlopen|requests\.get|urllib|http|b64decode|base64|decode\()", _FLAGS)),
    ("runs remote code", re.compile(r"\b(?:exec|eval)\s*\(\s*(?:base64\.)?b64decode\b", _FLAGS)),
    ("runs remote code", re.compile(r"\bbase64\s+(?:-d|--decode)\b[^\n]*\|\s*(?:ba|z)?sh\b", _FLAGS)),
    ("runs remote code", re.compile(r"\bpython3?\s+-c\s+[\"'][^\n]*(?:urllib|requests|urlopen|socket)", _FLAGS)),
    ("disables tests", re.compile(r"@pytest\.mark\.(?:skip|skipif|xfail)\b|\bpytest\.(?:skip|xfail)\s*\(", _FLAGS)),
    ("disables tests", re.compile(r"\b(?:os\.(?:remove|unlink)|shutil\.rmtree|\.unlink)\s*\([^\n]*\btests?\b", _FLAGS)),
    ("disables tests", re.compile(r"@unittest\.skip|\bunittest\.skip(?:If|Unless)?\s*\(", _FLAGS)),
    ("disables tests", re.compile(r"--deselect\b|--ignore(?:-glob)?[= ]\S*test|-k\s+[\"']?not\s", _FLAGS)),
    ("disables tests", re.compile(r"\b(?:rm|del|unlink|git\s+rm)\b[^\n]*\btests?[/_\w.]*\.py|\brm\s+-rf?\s+\S*tests?\b", _FLAGS)),
    ("disables tests", re.compile(r"\b(?:delete|remove|disable|skip|comment out)\s+(?:the\s+)?(?:failing\s+)?tests?\b", _FLAGS)),
    ("weakens tests", re.compile(r"\bassert\s*\(?\s*(?:True|1|not\s+(?:False|None|0))\s*\)?\s*(?:[`'\"\n,#]|$)")),
    ("deletes tests", re.compile(r"\bremoved? `(?:async\s+)?def\s+test\w*\s*\(", _FLAGS)),
    ("touches credentials", re.compile(r"~/\.ssh|\.ssh/(?:id_|authorized_keys|config)|\bid_(?:rsa|ed25519|ecdsa)\b", _FLAGS)),
    ("touches credentials", re.compile(r"\.aws/credentials|\.netrc\b|\.pypirc\b|\.git-credentials|\.docker/config\.json|\.kube/config", _FLAGS)),
    ("touches credentials", re.compile(r"\b(?:printenv|env)\s*(?:\||>)|\bos\.environ\b(?:\s*\)|\.copy\(\)|\.items\(\))", _FLAGS)),
    ("touches credentials", re.compile(r"\b(?:os\.environ|getenv)\b[^\n]{0,40}(?:TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY)", _FLAGS)),
    ("touches credentials", re.compile(r"\bsecurity\s+find-(?:generic|internet)-password|\bkeyring\.get_password\b", _FLAGS)),
]  # fmt: skip


@dataclass
class Screened:
    accepted: list[Skill] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(skill id, reason) of each refused draft."""


_ASSERTION_RE = re.compile(r"^\s*(?:assert\b|self\.assert\w*\s*\(|self\.fail\b)")
_TEST_DEF_RE = re.compile(r"^\s*(?:async\s+)?def\s+test\w*\s*\(")


def _rule_reason(before: str, after: str) -> str | None:
    """A rewrite that removes an assertion (to nothing or to something that asserts nothing) or a test."""
    if _ASSERTION_RE.match(before) and not _ASSERTION_RE.match(after):
        return f"weakens tests: `{before[:60]}` -> `{after[:20]}`"
    if _TEST_DEF_RE.match(before) and not after.strip():
        return f"deletes tests: remove `{before[:60]}`"
    return None


def reason_to_refuse(skill: Skill) -> str | None:
    """Why `skill` must not be stored (the first rule its text breaks, quoting it), or None when it is safe."""
    for rw in skill.rule:
        reason = _rule_reason(rw.before, rw.after)
        if reason:
            return reason
    return reason_in_text(
        "\n".join([skill.title, skill.pattern, skill.strategy, *(f"{r.before}\n{r.after}" for r in skill.rule)])
    )


def reason_in_text(text: str) -> str | None:
    """The first rule `text` breaks, quoting it, or None."""
    for reason, pattern in RULES:
        found = pattern.search(text)
        if found:
            return f"{reason}: `{found.group(0)[:80]}`"
    return None


def screen(drafts: Sequence[Skill], redactor: Redactor | None = None) -> Screened:
    """Redact every draft's text, then keep the safe ones and refuse the others with their reasons."""
    redactor = redactor or Redactor()
    out = Screened()
    for draft in drafts:
        fields = {f: redactor.redact_text(getattr(draft, f)) for f in ("title", "pattern", "strategy")}
        clean = draft.model_copy(update=fields) if any(fields[f] != getattr(draft, f) for f in fields) else draft
        reason = reason_to_refuse(clean)
        if reason is None:
            out.accepted.append(clean)
        else:
            out.refused.append((draft.skill_id, reason))
    return out
