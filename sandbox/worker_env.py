"""The environment of the server's worker processes (syntax, redaction, embedder): only what they need.

A worker runs with the server's uid, as a test under the plain local backend does; its environment is in
`/proc/PID/environ` for whoever may read that (each worker also makes itself undumpable first thing, see
`sandbox.undumpable`, so the same uid without CAP_SYS_PTRACE may not). So a worker is given an allowlist of the
server's variables, and never one whose name looks like a credential (`SECRET_NAME_RE`), whatever allowed it: the
server's API keys and tokens stay in the server.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from sandbox.exec.base import SECRET_NAME_RE

#: What every worker keeps: where programs, libraries (an interpreter that needs `LD_LIBRARY_PATH` to start) and the
#: home dir are, the locale and the time zone.
BASE_NAMES = frozenset({"PATH", "LD_LIBRARY_PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR"})
BASE_PREFIXES = ("LC_",)


def worker_env(
    names: Iterable[str] = (),
    prefixes: tuple[str, ...] = (),
    defaults: Mapping[str, str] | None = None,
    host: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a worker process: `defaults`, then the `host`'s (this process's) variables named in
    `BASE_NAMES` or `names`, or starting with one of `BASE_PREFIXES` or `prefixes`; none whose name looks like a
    credential (KEY, TOKEN, SECRET, AUTH...), not even in `defaults`."""
    keep = BASE_NAMES | set(names)
    starts = (*BASE_PREFIXES, *prefixes)
    source = os.environ if host is None else host
    env = dict(defaults or {})
    env.update((k, v) for k, v in source.items() if k in keep or k.startswith(starts))
    return {k: v for k, v in env.items() if not SECRET_NAME_RE.search(k)}
