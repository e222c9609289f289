"""Secret redaction benchmark: `python -m bench.redact`.

Positives: secrets of 18 kinds, generated from a fixed seed in realistic formats (no real secret is stored in
the repository), each placed in every context of `bench/data/redaction/contexts.json` (env files, JSON and YAML
config, shell commands, Python, logs, HTTP headers, tracebacks). A sample counts as redacted when no 8-character
piece of the secret is left. Negatives: `bench/data/redaction/clean.txt` (git SHAs, sha256 sums, UUIDs, npm
integrity strings, base64 test data, lockfile and log lines, identifiers) and the source lines of installed
packages (pydantic, anyio, httpx, starlette, click, rich); a false positive is a line with any redaction.

Baseline, same run: well-known provider prefixes only (what a prefix scanner finds), no context or entropy
rules. Results go to `docs/benchmarks/redact.md`; exit status 1 if a target is missed.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import platform
import random
import string
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from skills_store.redact import RULES, Redactor

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = REPO_ROOT / "bench" / "data" / "redaction"
OUT = REPO_ROOT / "docs" / "benchmarks" / "redact.md"
CODE_PACKAGES = ("pydantic", "anyio", "httpx", "starlette", "click", "rich")
RECALL_TARGET = 0.99
FP_LINE_TARGET = 0.001
FP_CLEAN_TARGET = 0.01
PREFIX_KINDS = {
    "anthropic-key", "openai-key", "aws-access-key", "github-token", "gitlab-token", "slack-token", "slack-webhook",
    "google-api-key", "google-oauth", "stripe-key", "huggingface-token", "npm-token", "pypi-token", "jwt",
    "private-key",
}  # fmt: skip
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64url(json.dumps({"sub": _r(rng, 10), "iat": rng.randrange(10**9, 2 * 10**9)}).encode())
    return f"{head}.{body}.{_b64url(rng.randbytes(32))}"


def _pem(rng: random.Random) -> str:
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    lines = [base64.b64encode(rng.randbytes(48)).decode() for _ in range(6)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "openai": lambda g: "sk-" + _r(g, 48),
    "openai-project": lambda g: "sk-proj-" + _r(g, 74, URLSAFE) + _r(g, 2, string.digits),
    "anthropic": lambda g: "sk-ant-api03-" + _r(g, 93, URLSAFE) + "AA",
    "aws-access-key": lambda g: g.choice(["AKIA", "ASIA"]) + _r(g, 16, string.ascii_uppercase + string.digits),
    "aws-secret": lambda g: _r(g, 40, ALNUM + "/+"),
    "github-classic": lambda g: g.choice(["ghp_", "gho_", "ghs_"]) + _r(g, 36),
    "github-fine-grained": lambda g: "github_pat_" + _r(g, 22) + "_" + _r(g, 59),
    "slack-token": lambda g: f"xoxb-{g.randrange(10**11, 10**12)}-{g.randrange(10**11, 10**12)}-{_r(g, 24)}",
    "slack-webhook": lambda g: f"https://hooks.slack.com/services/T{_r(g, 8).upper()}/B{_r(g, 8).upper()}/{_r(g, 24)}",
    "google-api-key": lambda g: "AIza" + _r(g, 35, URLSAFE),
    "google-oauth": lambda g: "ya29." + _r(g, 80, URLSAFE),
    "stripe": lambda g: g.choice(["sk_live_", "rk_live_"]) + _r(g, 24),
    "huggingface": lambda g: "hf_" + _r(g, 34),
    "jwt": _jwt,
    "private-key": _pem,
    "password": lambda g: _r(g, g.randrange(12, 21), ALNUM + "!#%^*_+=~"),
    "generic-token": lambda g: _r(g, g.randrange(32, 41)),
    "hex-secret": lambda g: _r(g, 40, "0123456789abcdef"),
}
#: Contexts keyed by which secrets they suit; `{s}` is the secret.
KEYED = {"aws-secret": ("aws",), "password": ("password",), "generic-token": ("token", "any"), "hex-secret": ("token",)}


def positives(rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, secret, text) for every kind in every context it suits."""
    contexts = json.loads((DATA / "contexts.json").read_text())
    out = []
    for kind, gen in GENERATORS.items():
        groups = KEYED.get(kind, ("any", "named"))
        for template in [t for g in groups for t in contexts[g]]:
            secret = gen(rng)
            if kind == "private-key" and "\n" not in template and "{s}" in template:
                template = "{s}"  # a key block stands on its own lines
            out.append((kind, secret, template.replace("{s}", secret)))
    return out


def leaked(secret: str, original: str, redacted: str) -> bool:
    """Whether an 8-character piece of the secret (one not found elsewhere in the sample) survived."""
    around = original.replace(secret, "\0")
    pieces = {secret[i : i + 8] for i in range(0, max(len(secret) - 7, 1), 4)}
    return any(p in redacted for p in pieces if len(p) == 8 and p.strip() and p not in around)


def code_lines() -> list[str]:
    lines: list[str] = []
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        for path in sorted(Path(spec.origin).parent.rglob("*.py")):
            if "test" in path.parts[-1] or "tests" in path.parts:
                continue
            lines += [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    return lines


class PrefixBaseline:
    """Provider-prefix rules only: what a scanner of well-known key formats finds."""

    name = "prefix rules only"

    def __init__(self) -> None:
        self._inner = Redactor(entropy=False)
        self._inner._rules = tuple(r for r in RULES if r.kind in PREFIX_KINDS)

    def redact_text(self, text: str) -> str:
        return self._inner.redact_text(text)


def evaluate(redactor, pos, clean: list[str], code: list[str]) -> dict[str, object]:
    start = time.perf_counter()
    misses = [(k, t) for k, s, t in pos if leaked(s, t, redactor.redact_text(t))]
    clean_fp = [c for c in clean if "[REDACTED:" in redactor.redact_text(c)]
    code_fp = [c for c in code if "[REDACTED:" in redactor.redact_text(c)]
    elapsed = time.perf_counter() - start
    size = sum(len(t) for _, _, t in pos) + sum(map(len, clean)) + sum(map(len, code))
    by_kind: dict[str, list[int]] = {}
    for k, _, _ in pos:
        by_kind.setdefault(k, [0, 0])[1] += 1
    for k, _ in misses:
        by_kind[k][0] += 1
    return {
        "recall": 1 - len(misses) / len(pos),
        "clean_fp": len(clean_fp) / len(clean),
        "code_fp": len(code_fp) / max(len(code), 1),
        "mb_s": size / elapsed / 1e6,
        "misses": misses,
        "clean_fp_lines": clean_fp,
        "code_fp_lines": code_fp,
        "by_kind": by_kind,
    }


def main() -> None:
    rng = random.Random(20260701)
    pos = positives(rng)
    clean = [ln for ln in (DATA / "clean.txt").read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    code = code_lines()
    ours = evaluate(Redactor(), pos, clean, code)
    base = evaluate(PrefixBaseline(), pos, clean, code)
    checks = [
        ("recall", ours["recall"] >= RECALL_TARGET, f">= {RECALL_TARGET}"),
        ("false positives, clean samples", ours["clean_fp"] <= FP_CLEAN_TARGET, f"<= {FP_CLEAN_TARGET}"),
        ("false positives, code lines", ours["code_fp"] <= FP_LINE_TARGET, f"<= {FP_LINE_TARGET}"),
    ]
    write_report(ours, base, pos, clean, code, checks)
    print(OUT.read_text())
    sys.exit(0 if all(ok for _, ok, _ in checks) else 1)


def write_report(ours, base, pos, clean, code, checks) -> None:
    kinds = "\n".join(
        f"| {k} | {n} | {n - m} | {(n - m) / n:.3f} | {n - base['by_kind'][k][0]} |"
        for k, (m, n) in sorted(ours["by_kind"].items())
    )
    fps = "\n".join(f"- `{line.strip()[:140]}`" for line in ours["code_fp_lines"][:15] + ours["clean_fp_lines"][:10])
    misses = "\n".join(f"- {k}: `{t.strip()[:140]}`" for k, t in ours["misses"][:10]) or "- none"
    verdict = "\n".join(f"| {name} | {target} | {'pass' if ok else 'FAIL'} |" for name, ok, target in checks)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        f"""# Secret redaction (`python -m bench.redact`)

Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform()}.
Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.

Corpus: {len(pos)} secrets of {len(GENERATORS)} kinds in {len(pos) // len(GENERATORS)}-ish contexts each
(generated from a fixed seed; `bench/data/redaction/contexts.json`), {len(clean)} clean samples
(`bench/data/redaction/clean.txt`: hashes, UUIDs, base64 test data, lockfiles, logs) and {len(code):,} non-blank
source lines of {", ".join(CODE_PACKAGES)}.

| measure | skillbank `Redactor` | baseline: {PrefixBaseline.name} | ratio |
| --- | --- | --- | --- |
| recall (secret fully removed) | {ours["recall"]:.4f} | {base["recall"]:.4f} | {ours["recall"] / base["recall"]:.2f}x |
| false-positive rate, clean samples | {ours["clean_fp"]:.4f} | {base["clean_fp"]:.4f} | |
| false-positive rate, code lines | {ours["code_fp"]:.5f} ({len(ours["code_fp_lines"])}) | {base["code_fp"]:.5f} | |
| throughput | {ours["mb_s"]:.1f} MB/s | {base["mb_s"]:.1f} MB/s | {ours["mb_s"] / base["mb_s"]:.2f}x |

| target | threshold | result |
| --- | --- | --- |
{verdict}

## Recall by kind

| kind | samples | redacted | recall | baseline redacted |
| --- | --- | --- | --- | --- |
{kinds}

## Misses (first 10)

{misses}

## False positives (first 25)

{fps or "- none"}
"""
    )


if __name__ == "__main__":
    main()
