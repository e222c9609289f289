"""How many threads torch gets for each request of the embedder worker: one for a short query after an idle gap,
all of them otherwise.

torch runs each operator of the forward pass on its intra-op pool (two threads on a 2-core machine). Right after an
encode those threads spin, waiting for the next operator; some 20-25 ms later they sleep. A query encoded while
they spin gains from the second thread, one encoded after they slept pays for waking it at every operator.
Measured in-process on this VM, all-MiniLM-L6-v2, one query of ~15 tokens, medians:

| gap before the encode | 2 threads | 1 thread |
| --- | --- | --- |
| none (back to back) | 4.1-4.3 ms | 6.3-6.7 ms |
| 8 ms | 4.9 | 6.9 |
| 20 ms | 5.3 | 6.8-7.5 |
| 25 ms | 10.5-10.8 | 6.7-7.3 |
| 100 ms | 11.8 | 10.2 |

and for ~38 tokens after 100 ms, 15.9 vs 11.9 ms; from ~74 tokens on, two threads win even after a gap (256
tokens: 23-26 vs 39-42 ms). An agent's searches come seconds apart, so its queries take the one-thread path;
batches (indexing, distilling) and long texts keep every thread. One thread also leaves the other core to the
server, which runs the keyword side of the same search meanwhile, instead of to a thread spinning after the encode.

Only the worker does this: it is a process of its own, so its thread count is nobody else's. In the server's
process (the in-process fallback) torch's pool is shared with whatever else runs there, and stays as configured.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from types import ModuleType

#: After this long without an encode, the pool's threads have gone to sleep (they spin ~20-25 ms here).
IDLE_S = 0.02
#: A single text up to this many characters (~40 tokens) is encoded on one thread after an idle gap.
SHORT_CHARS = 128


class ThreadPolicy:
    """`before(texts)` sets torch's thread count for the request, `after()` marks its end. A no-op where torch is
    not loaded (the hashing embedder)."""

    def __init__(
        self,
        torch: ModuleType | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        idle_s: float = IDLE_S,
        short_chars: int = SHORT_CHARS,
    ) -> None:
        self._torch = torch if torch is not None else sys.modules.get("torch")
        self._clock = clock
        self._idle_s = idle_s
        self._short_chars = short_chars
        self.full = self._torch.get_num_threads() if self._torch is not None else 1
        """The thread count the worker was configured with (all the cores, or `OMP_NUM_THREADS`)."""
        self._last_end = float("-inf")

    def threads_for(self, texts: Sequence[str]) -> int:
        """The thread count a request of `texts` gets now."""
        idle = self._clock() - self._last_end >= self._idle_s
        if idle and len(texts) == 1 and len(texts[0]) <= self._short_chars:
            return 1
        return self.full

    def before(self, texts: Sequence[str]) -> None:
        if self._torch is None or self.full <= 1:
            return
        wanted = self.threads_for(texts)
        if self._torch.get_num_threads() != wanted:
            self._torch.set_num_threads(wanted)

    def after(self) -> None:
        self._last_end = self._clock()
