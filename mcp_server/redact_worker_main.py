"""The redaction worker's own side (`python -I -S -c ... SPEC`): the standard library and `skills_store.redact` only,
so it starts in milliseconds and holds little memory. The server's side and the protocol: `mcp_server.redact_worker`.

Requests on stdin and answers on stdout are frames: a 4-byte little-endian length, then a `marshal` payload. A
request is a JSON-like value (the windows of a call's arguments); its answer is `(True, redacted value)` or
`(False, error text)`; a first answer `(True, None)` says the worker is ready. The worker leaves when stdin
closes: the server has gone.
"""

from __future__ import annotations

import json
import marshal
import os
import struct
import sys

from sandbox.syntax_worker_main import background, read_exact, write_all
from sandbox.undumpable import make_undumpable
from skills_store.redact import Redactor

SIZE = struct.Struct("<I")


def serve(spec: str) -> None:
    """Answer requests until stdin closes; `spec` is the JSON `[extra_patterns, entropy]` of the server's redactor."""
    make_undumpable()  # it holds the text before redaction: not for a test's eyes (see `sandbox.undumpable`)
    patterns, entropy = json.loads(spec)
    background()  # a wake-up by the server does not take the server's core (see `syntax_worker_main.background`)
    redactor = Redactor(patterns, entropy=entropy)
    out = os.dup(1)
    os.dup2(2, 1)  # whatever a library prints goes to stderr, never into the answers
    ready = marshal.dumps((True, None))
    write_all(out, SIZE.pack(len(ready)) + ready)
    while (head := read_exact(0, SIZE.size)) is not None:
        payload = read_exact(0, SIZE.unpack(head)[0])
        if payload is None:
            return
        try:
            answer = marshal.dumps((True, redactor.redact(marshal.loads(payload))))
        except Exception as exc:  # an answer for every request keeps the two sides in step
            answer = marshal.dumps((False, f"{type(exc).__name__}: {exc}"))
        write_all(out, SIZE.pack(len(answer)) + answer)


if __name__ == "__main__":  # pragma: no cover - the server starts it with -c (see redact_worker._MAIN)
    serve(sys.argv[1])
