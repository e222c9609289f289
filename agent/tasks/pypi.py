"""Fetching a project's sdist from PyPI (JSON API), checking its sha256 and unpacking it safely.

Real projects serve as task sources without being copied into this repo: `tasks synth --pypi NAME==VERSION`
works on the unpacked sdist. Archives are extracted with the `data` filter (no absolute paths, no links out).
"""

from __future__ import annotations

import hashlib
import re
import tarfile
import zipfile
from pathlib import Path

import httpx

from agent.tasks.errors import SpecError, SynthError

PYPI = "https://pypi.org/pypi"
SPEC_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")


def parse_spec(spec: str) -> tuple[str, str]:
    """(name, version) of `NAME==VERSION`; a `SpecError` (bad input, exit 2) for anything else."""
    match = SPEC_RE.match(spec.strip())
    if not match:
        raise SpecError(f"{spec!r} is not NAME==VERSION (e.g. more-itertools==10.2.0)")
    return match.group(1), match.group(2)


def read_manifest(path: Path) -> list[str]:
    """NAME==VERSION lines of a manifest (blank lines and # comments ignored), each checked."""
    specs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            parse_spec(line)
            specs.append(line)
    return specs


def sdist_url(name: str, version: str, client: httpx.Client) -> tuple[str, str, str]:
    """(url, filename, sha256) of the release's sdist: from the release's JSON, or from the project's JSON (some
    mirrors serve only that one, with file URLs relative to it)."""
    response = client.get(f"{PYPI}/{name}/{version}/json")
    if response.status_code == 404:
        response = client.get(f"{PYPI}/{name}/json")
        if response.status_code == 404:
            raise SynthError(f"PyPI has no project {name!r}")
        response.raise_for_status()
        entries = response.json().get("releases", {}).get(version)
        if entries is None:
            raise SynthError(f"PyPI has no release {name}=={version}")
    else:
        response.raise_for_status()
        entries = response.json().get("urls", [])
    for entry in entries:
        if entry.get("packagetype") == "sdist":
            url = str(response.url.join(entry["url"]))
            return url, entry["filename"], entry["digests"]["sha256"]
    raise SynthError(f"{name}=={version} has no sdist on PyPI (only wheels), so there are no tests to use")


def fetch_sdist(spec: str, dest: Path, *, timeout_s: float = 120, transport: httpx.BaseTransport | None = None) -> Path:
    """Download and unpack the sdist of `spec` under `dest`; returns the project's root directory."""
    name, version = parse_spec(spec)
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with httpx.Client(timeout=timeout_s, follow_redirects=True, transport=transport) as client:
            url, filename, sha256 = sdist_url(name, version, client)
            archive = dest / Path(filename).name
            data = client.get(url).raise_for_status().content
    except httpx.HTTPError as exc:
        raise SynthError(f"cannot download {spec} from PyPI: {exc}") from exc
    if hashlib.sha256(data).hexdigest() != sha256:
        raise SynthError(f"the sdist of {spec} does not match the sha256 PyPI lists; not unpacking it")
    archive.write_bytes(data)
    target = dest / "src"
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                if member.startswith("/") or ".." in Path(member).parts:
                    raise SynthError(f"the sdist of {spec} holds an unsafe path {member!r}")
            zf.extractall(target)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(target, filter="data")
    roots = [p for p in target.iterdir() if p.is_dir()]
    return roots[0] if len(roots) == 1 else target
