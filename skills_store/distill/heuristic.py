"""`HeuristicDistiller`: offline, deterministic skills from the fix episodes of closed trajectories.

For each failure that was fixed (see `episodes`), the skill's `pattern` is the failure's error signature with only
the user's own names abstracted (`signature.specific`). When the patch makes an edit rule (`rules.derive`), the
skill is a lesson: its `rule` holds the rewrites and its strategy leads with them, then why, then this trajectory's
instance as an example (`lesson.render`). Otherwise its `strategy` says what the fix changed, where, and what kind
of change it was (with the changed lines as evidence). Its `sources` name the trajectory. A failure seen by two runs
or more and never fixed becomes a low-confidence *pitfall* skill listing what did not work. Failures without an
error message give no skill: there is no pattern to recognise them by.

Not every failure that went away was fixed (`attribution`): a "fix" that deletes or weakens the failing test gives
no skill, and when one patch removed failures of different signatures each keeps only the blocks that plausibly
fixed it (none: no skill). A case note (no rule) is made only under a pattern that keeps a word to recognise the
failure by (`signature.recognisable`): `assert <n> == <n>` fits every assertion. Paths quoted in a skill's text
lose the user's locations (`signature.without_paths`).

The prior confidence follows the evidence (documented in docs/distillation.md):

    0.55 base for a fix confirmed by a later test run
    +0.10 when the confirming run was the whole suite (not a selection)
    +0.05 when the trajectory ended in success, -0.10 when it ended in failure
    -0.05 per extra failing run before the fix (at most -0.15)
    -0.05 when the fix touched more than 3 files or needed fuzzy patch matching
    clamped to [0.30, 0.80]; pitfalls start at 0.25
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from skills_store.distill import lesson
from skills_store.distill.attribution import attributed, tampering
from skills_store.distill.changes import KIND_PHRASES, ChangeSummary, summarise
from skills_store.distill.episodes import FixEpisode, Pitfall, TestRun, episodes, language_of
from skills_store.distill.names import Names
from skills_store.distill.rules import Rewrite, derive
from skills_store.distill.runner import DistillResult
from skills_store.distill.screen import reason_in_text
from skills_store.distill.signature import ErrorSignature, recognisable, specific, without_paths
from skills_store.models import TAG_RE, EditRewrite, Skill, Trajectory
from skills_store.truncate import truncate_text

log = logging.getLogger(__name__)

PITFALL_PRIOR = 0.25

#: General advice per exception type, put before the evidence of the specific fix.
ADVICE: dict[str, str] = {
    "NameError": "A name is used where it is not defined: usually a typo of a name in scope or a missing import.",
    "ModuleNotFoundError": "The import names a module the interpreter cannot find: a missing dependency, a typo "
    "in the module name, or a package layout the test runner does not see.",
    "ImportError": "The module exists but does not provide the name: a wrong name, a moved definition, or a "
    "circular import.",
    "AttributeError": "The object has no such attribute: a typo, the wrong type (often None), or an API that changed.",
    "TypeError": "A value of the wrong type, or a call with the wrong arguments, reached the failing line.",
    "KeyError": "A key that is not in the mapping was read: check the key's spelling and where it should be set.",
    "IndexError": "An index past the end of a sequence: check empty inputs and loop boundaries.",
    "ValueError": "The value has the right type but an unacceptable content: check parsing and input validation.",
    "AssertionError": "The code under test returns something other than what the test expects: compare the two "
    "values in the message and fix the computation (not the test) unless the test is wrong.",
    "ZeroDivisionError": "A division by a value that can be zero: guard empty inputs or zero counts.",
    "FileNotFoundError": "The path does not exist where the code runs: check relative paths and the working directory.",
    "SyntaxError": "The file does not parse: fix the syntax at the reported line (and the line before it).",
    "IndentationError": "The indentation does not match the block structure: fix it at the reported line.",
    "RecursionError": "A recursion has no reachable base case: check the stopping condition.",
    "UnboundLocalError": "A local variable is read before it is assigned on some path, or shadows a global.",
}


@dataclass
class HeuristicConfig:
    whole_suite_bonus: float = 0.10
    success_bonus: float = 0.05
    failure_penalty: float = 0.10
    attempt_penalty: float = 0.05
    max_attempt_penalty: float = 0.15
    noisy_penalty: float = 0.05
    tags: list[str] = field(default_factory=lambda: ["distilled"])


def _tag(text: str) -> str | None:
    tag = text.strip().lower().replace(" ", "-")
    return tag if TAG_RE.match(tag) else None


def _skill_id(*parts: str) -> str:
    return "sk-" + hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]


class HeuristicDistiller:
    """The `Distiller` protocol, with no model: see the module doc."""

    name = "heuristic"
    deterministic = True
    """The same trajectory always gives the same result (so one it fails on can be skipped for good)."""

    def __init__(self, config: HeuristicConfig | None = None) -> None:
        self.config = config or HeuristicConfig()

    def distill(self, trajectories: Sequence[Trajectory]) -> list[Skill]:
        drafts: list[Skill] = []
        for traj in trajectories:
            drafts.extend(self.distill_one(traj))
        return drafts

    def distill_batch(self, trajectories: Sequence[Trajectory]) -> DistillResult:
        return DistillResult(self.distill(trajectories), [t.trajectory_id for t in trajectories])

    def distill_one(self, traj: Trajectory) -> list[Skill]:
        fixes, pitfalls = episodes(traj)
        if not fixes and not pitfalls:
            return []
        found: list[FixEpisode | Pitfall] = [*fixes, *pitfalls]
        edits = {e.index: e for f in found for e in f.edits}
        tests = [f.failure.test_id for f in found]
        names = lesson.trajectory_names(traj, [edits[i] for i in sorted(edits)], tests)
        grouped: dict[tuple[str, tuple[int, ...]], list[FixEpisode]] = {}
        for fix in fixes:
            if fix.failure.signature is not None:
                key = (fix.failure.signature.text, tuple(e.index for e in fix.edits))
                grouped.setdefault(key, []).append(fix)
        out: list[Skill] = []
        for key, group in grouped.items():
            # One patch that also removed a failure of another signature: each keeps only its own blocks.
            contested = any(other[0] != key[0] and set(other[1]) & set(key[1]) for other in grouped)
            skill = self._fix_skill(traj, group, names, contested=contested)
            if skill is not None:
                out.append(skill)
        seen: set[str] = set()
        for pit in pitfalls:
            sig = pit.failure.signature
            if sig is not None:
                sig = specific(sig, names)
            if sig is not None and sig.text not in seen:
                seen.add(sig.text)
                out.append(self._pitfall_skill(traj, sig, pit))
        return out

    def prior(self, traj: Trajectory, fix: FixEpisode, change: ChangeSummary) -> float:
        c = self.config
        p = 0.55
        if fix.verified_by.scope is None:
            p += c.whole_suite_bonus
        if traj.outcome == "success":
            p += c.success_bonus
        elif traj.outcome == "failure":
            p -= c.failure_penalty
        p -= min(c.attempt_penalty * (fix.failing_runs - 1), c.max_attempt_penalty)
        if len(change.files) > 3 or any(e.fuzzy for e in fix.edits):
            p -= c.noisy_penalty
        return round(min(0.80, max(0.30, p)), 4)

    def _fix_skill(self, traj: Trajectory, group: list[FixEpisode], names: Names, *, contested: bool) -> Skill | None:
        """The skill of one fixed failure; None when the edits did not fix it (the test was deleted or weakened),
        when a patch shared with other failures has no block of its own (`attribution`), or for a case note whose
        pattern would fit every failure of its type."""
        fix = group[0]
        assert fix.failure.signature is not None  # grouped only when a signature exists
        sig = specific(fix.failure.signature, names)
        change = summarise(fix.edits)
        for member in group:
            why = tampering(member.failure, change)
            if why is not None:
                log.info("no skill for %s in %s: the edit %s", sig.text, traj.trajectory_id, why)
                return None
        if contested:
            own = attributed(fix.failure, change, traj.workspace)
            if own is None:
                return None
            change = own
        try:
            rewrites = derive(change.files, names, sig.example)
        except Exception:  # an agent's patch no tokenizer foresaw must cost the rule, not the skill
            log.exception("no edit rule for %s: deriving it failed", traj.trajectory_id)
            rewrites = []
        if rewrites:
            return self._lesson_skill(traj, fix, sig, change, rewrites)
        if not recognisable(sig):
            return None
        lead = KIND_PHRASES[change.kinds[0]]
        where = _where(change)
        tests = sorted({f.failure.test_id for f in group if f.failure.test_id})
        lines = [
            ADVICE.get(sig.exc_type, f"{sig.exc_type} was raised; the fix below removed it."),
            f"What fixed it: {lead}{where}.",
        ]
        lines += [f"- {d}" for d in change.details[:6]]
        kinds = ", ".join(KIND_PHRASES[k] for k in change.kinds)
        lines.append(f"Kind of change: {kinds}.")
        lines.append(
            f"Evidence: {sig.example}" + (f" (raised at {sig.location})" if sig.location else "") + f"; fixed after "
            f"{fix.failing_runs} failing run(s), confirmed by {_confirmation(fix)}"
            + (f" ({', '.join(tests[:5])})." if tests else ".")
        )
        lines.append("Changed lines:\n```diff\n" + change.excerpt + "\n```")
        return self._skill(
            traj,
            skill_id=_skill_id(traj.trajectory_id, sig.text, ",".join(change.kinds), ",".join(change.paths)),
            title=f"{sig.exc_type}: {lead}",
            pattern=sig.text,
            strategy="\n".join(lines),
            prior=self.prior(traj, fix, change),
            tags=[sig.exc_type, *change.kinds],
            paths=change.paths,
        )

    def _lesson_skill(
        self, traj: Trajectory, fix: FixEpisode, sig: ErrorSignature, change: ChangeSummary, rewrites: list[Rewrite]
    ) -> Skill:
        """A fix with an edit rule: the rule, why, and this trajectory's instance as the first example."""
        rule = [EditRewrite(before=rw.before, after=rw.after) for rw in rewrites]
        advice = ADVICE.get(sig.exc_type, f"{sig.exc_type} was raised where the rule's left side was.")
        removed = _shareable(sig.example, traj.workspace)[:160]  # cut after the paths go: their length is the user's
        why = f"{advice} Applying the rewrite removed `{removed}`; {_afterwards(fix)}."
        examples = [lesson.example_line(rw, traj.trajectory_id) for rw in rewrites[:1]]
        tag = lesson.lesson_tag(sig.text, rule)
        return self._skill(
            traj,
            skill_id=_skill_id(traj.trajectory_id, sig.text, rule[0].before, rule[0].after),
            title=lesson.title_for(sig.exc_type, rule),
            pattern=sig.text,
            strategy=lesson.render(rule, why, examples),
            prior=self.prior(traj, fix, change),
            tags=[sig.exc_type, *change.kinds, *([tag] if tag else []), "lesson"],
            paths=change.paths,
            rule=rule,
        )

    def _pitfall_skill(self, traj: Trajectory, sig: ErrorSignature, pit: Pitfall) -> Skill:
        change = summarise(pit.edits) if pit.edits else None
        last = pit.last.signature if pit.last is not None else None
        moved = last is not None and pit.failure.signature is not None and last.text != pit.failure.signature.text
        came_back = (
            f"Pitfall: this failure's test kept failing in {pit.failing_runs} test runs and was never fixed in the "
            f"session: the last run reported `{last.example}` instead."
            if moved and last is not None
            else f"Pitfall: this failure came back in {pit.failing_runs} test runs and was never fixed in the session."
        )
        lines = [
            ADVICE.get(sig.exc_type, f"{sig.exc_type} was raised."),
            came_back,
            f"Evidence: {sig.example}" + (f" (raised at {sig.location})" if sig.location else "") + ".",
        ]
        if change is not None:
            tried = ", ".join(KIND_PHRASES[k] for k in change.kinds)
            lines.append(f"What did not fix it: {tried}{_where(change)}. Look elsewhere before repeating it.")
            lines += [f"- {d}" for d in change.details[:6]]
            lines.append("Changed lines that did not help:\n```diff\n" + change.excerpt + "\n```")
        else:
            lines.append("Nothing was changed between the runs: rerunning alone does not fix it.")
        return self._skill(
            traj,
            skill_id=_skill_id(traj.trajectory_id, sig.text, "pitfall"),
            title=f"Pitfall: {sig.exc_type} that resisted the obvious fixes",
            pattern=sig.text,
            strategy="\n".join(lines),
            prior=PITFALL_PRIOR,
            tags=[sig.exc_type, "pitfall"],
            paths=change.paths if change else [],
        )

    def _skill(
        self,
        traj: Trajectory,
        *,
        skill_id: str,
        title: str,
        pattern: str,
        strategy: str,
        tags: list[str],
        paths: list[str],
        prior: float,
        rule: list[EditRewrite] | None = None,
    ) -> Skill:
        language = language_of(paths) or ("python" if _ran_pytest(traj) else None)
        all_tags = [t for t in (_tag(x) for x in [*self.config.tags, *tags, language or ""]) if t]
        return Skill(
            skill_id=skill_id,
            title=_shareable(title, traj.workspace)[:200],
            pattern=pattern,
            strategy=truncate_text(_shareable(strategy, traj.workspace), 8000),
            confidence=prior,
            prior=prior,
            tags=list(dict.fromkeys(all_tags))[:32],
            language=language,
            repo=traj.repo,
            sources=[traj.trajectory_id],
            rule=rule or [],
        )


def _suite(run: TestRun) -> str:
    return "the whole test suite" if run.scope is None else "the selected tests"


def _still_failing(run: TestRun) -> str:
    n = len(run.failures)
    return f" ({n} other failing test(s) remained)" if n else ""


def _afterwards(fix: FixEpisode) -> str:
    """What the runs after the fix showed, and no more: a run with other failures left did not pass."""
    run = fix.verified_by
    if run.ok:
        return f"{_suite(run)} passed afterwards"
    out = f"the next run of {_suite(run)} no longer reported it{_still_failing(run)}"
    return out + (", and the whole test suite passed later in the session" if fix.suite_passed else "")


def _confirmation(fix: FixEpisode) -> str:
    run = fix.verified_by
    if run.ok:
        return f"{_suite(run)} passing"
    later = ", the whole test suite passing later" if fix.suite_passed else ""
    return f"{_suite(run)} no longer reporting it{_still_failing(run)}{later}"


def _where(change: ChangeSummary) -> str:
    parts = []
    for f in change.files[:3]:
        place = f" (in {', '.join(f'`{p}`' for p in f.places[:2])})" if f.places else ""
        parts.append(f"`{f.path}`{place}")
    more = f" and {len(change.files) - 3} more file(s)" if len(change.files) > 3 else ""
    return f" in {', '.join(parts)}{more}" if parts else ""


def _shareable(text: str, workspace: str | None) -> str:
    """`text` without the user's paths (`signature.without_paths`), unless hiding a path would hide from screening
    what it refuses (`~/.ssh/id_rsa`): that text stays as it is, and the screen refuses the draft."""
    clean = without_paths(text, workspace)
    if clean != text and reason_in_text(clean) is None and reason_in_text(text) is not None:
        return text
    return clean


def _ran_pytest(traj: Trajectory) -> bool:
    return any(s.tool == "run_tests" and not (s.args or {}).get("command") for s in traj.steps)
