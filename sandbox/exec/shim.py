"""The process between the server and a local command: it sets the limits, watches the command's whole tree and
kills what is left of it, and holds nothing a test could use.

It runs as `python -I -S -c SHIM ARGS...` (`shim_args`) in its own session, importing as little as it can (it
starts for every run). It makes itself a child subreaper, so a process the
tests start that double-forks and calls `setsid` (a daemon) is reparented to it rather than to init: when the
command ends, every process still below the shim is killed and counted, with or without a pids cgroup. Only what
is really left counts: not a process already exiting (a zombie, `PF_EXITING`), not one that exits by itself within
`GRACE_S` (a multiprocessing forkserver at EOF), and not bubblewrap's pid-namespace init, reparented here when
the outer bwrap exits first, unless it still waits for a process of the tests (a daemon in the sandbox). It is
not dumpable (a same-uid test cannot open its `/proc/PID/fd` or ptrace it), and it reports on a pipe that the
command does not inherit. A SIGUSR1 (the server's timeout) makes it send SIGINT to every process of the tree but
bubblewrap's, as Ctrl-C would: pytest then writes its report of the tests that finished and shows where it was
stopped. A SIGTERM (after that, a cancel, or the server's death through `PR_SET_PDEATHSIG`) makes it kill the tree
at once. A test can still SIGKILL the shim: the server then sees no
report and warns, since without a cgroup nothing else finds processes that left the process group.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from pydantic import BaseModel

from sandbox.undumpable import make_undumpable as make_undumpable  # its old home: `sandbox.exec.local` imports it here

SHIM = r"""
import ctypes, os, resource, signal, sys, time
report, parent, cgroup, rlimits, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
me, wrapped = os.getpid(), os.path.basename(argv[0]) == "bwrap"
GRACE_S = 0.05  # what is still up when the command ends gets this long to exit by itself before it counts
os.set_inheritable(report, False)
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _prctl = None
def prctl(option, value):
    return _prctl is not None and _prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0
prctl(4, 0)  # PR_SET_DUMPABLE: same-uid processes cannot open /proc/<shim>/fd or ptrace it
tracked = prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphans of the tree come back to the shim
prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: the server died -> clean up
if os.getppid() != parent:
    os._exit(137)
for name, value in (item.split("=") for item in rlimits.split(",") if item):
    res, value = getattr(resource, name), int(value)
    hard = resource.getrlimit(res)[1]
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(res, (value, value))
if cgroup:
    with open(cgroup, "w") as f:
        f.write(str(me))

def children(of=me):
    try:
        with open(f"/proc/{of}/task/{of}/children") as f:
            return {int(p) for p in f.read().split()}
    except OSError:
        pass
    kids = set()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if entry.isdigit() and len(fields) > 1 and fields[1] == str(of):
            kids.add(int(entry))
    return kids

def stat_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return "", ["X"]
    return stat[stat.find("(") + 1 : stat.rfind(")")], stat[stat.rfind(")") + 2 :].split()

def alive(pid):
    fields = stat_of(pid)[1]
    return fields[0] not in "ZXx" and not (len(fields) > 6 and int(fields[6]) & 4)  # PF_EXITING: on its way out

def left(pid):
    if wrapped and stat_of(pid)[0] == "bwrap":  # bubblewrap's init (reparented here, maybe dying with the outer
        return bool(children(pid))  # bwrap): it counts when some process of the tests is still in its namespace
    return alive(pid)

def kill_tree(grace):
    end = time.monotonic() + (0 if wrapped else grace)  # bubblewrap's namespace is already being torn down
    while any(left(pid) for pid in children()) and time.monotonic() < end:
        time.sleep(0.002)  # something is still up: give what exits by itself (a forkserver at EOF) a moment
        reap()
    seen = set()
    while True:
        kids = children()
        for pid in kids:
            if pid not in seen and left(pid):
                seen.add(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0 if kids else os.WNOHANG)
        except ChildProcessError:
            return len(seen)

def reap():
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass

def finish(code, leftovers):
    try:
        os.write(report, f"{leftovers} {int(tracked)}".encode())
    except OSError:
        pass
    os._exit(code)

def interrupt(*_):  # SIGUSR1 (the server's timeout): Ctrl-C for the tree, bubblewrap's own processes left out
    todo = [me]
    while todo:
        for kid in children(todo.pop()):
            todo.append(kid)
            if stat_of(kid)[0] != "bwrap":
                try:
                    os.kill(kid, signal.SIGINT)
                except OSError:
                    pass

signal.signal(signal.SIGTERM, lambda *_: finish(137, kill_tree(0)))
signal.signal(signal.SIGUSR1, interrupt)
pid = os.fork()
if pid == 0:
    try:
        # SIGINT too: a server started in the background by a non-interactive shell (`skillbank serve &`, nohup)
        # inherits it ignored, and the tests would then sleep through the timeout's Ctrl-C and report nothing.
        for sig in ("SIGTERM", "SIGUSR1", "SIGPIPE", "SIGXFSZ", "SIGINT", "SIGQUIT"):
            if hasattr(signal, sig):
                signal.signal(getattr(signal, sig), signal.SIG_DFL)
        prctl(1, signal.SIGKILL)
        if os.getppid() != me:
            os._exit(137)
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"skillbank sandbox: cannot run {argv[0]!r}: {exc}\n")
    finally:
        os._exit(127)
while True:
    try:
        got, status = os.waitpid(-1, 0)
    except ChildProcessError:
        finish(127, 0)
    if got == pid:
        break
code = os.waitstatus_to_exitcode(status)
finish(128 - code if code < 0 else code, kill_tree(GRACE_S))
"""


#: Run inside bubblewrap around the command (`settle_args`): when the command has ended, give the processes left in
#: the sandbox's pid namespace up to ~50 ms (25 polls) to exit by themselves before bubblewrap tears it down.
SETTLE = r"""trap : INT
"$@"
code=$?
polls=0
while [ "$polls" -lt 25 ]; do
    set -- /proc/[0-9]*
    [ "$#" -le 2 ] && break
    sleep 0.002
    polls=$((polls + 1))
done
exit "$code"
"""


def settle_args(argv: list[str]) -> list[str]:
    """`argv` run by `SETTLE` (under bubblewrap's pid namespace, whose `/proc` lists only the sandbox's processes).

    bubblewrap's outer process exits as soon as the command does, and its pid-namespace init dies with it
    (`--die-with-parent`), killing whatever is still in the namespace: a multiprocessing forkserver or resource
    tracker a few ms from exiting at EOF is then killed and counted with a real daemon. Here those get a moment to
    go first (only bubblewrap's init and this shell are left); what still runs after it is the watcher's to count.
    The trap keeps the shell through the timeout's SIGINT (the tests get it too) without the tests inheriting it.
    """
    return ["/bin/sh", "-c", SETTLE, "sh", *argv]


class ShimReport(BaseModel):
    """What the shim said when it ended."""

    leftovers: int
    """Processes of the tree still alive after the command ended (all killed)."""
    tracked: bool
    """The shim was a child subreaper: processes that left the process group were found too."""


def shim_args(report_fd: int, rlimits: dict[str, int], cgroup: Path | None, argv: list[str]) -> list[str]:
    """The shim's command line: it reports on `report_fd`, applies `rlimits`, joins `cgroup`, then runs `argv`."""
    limits = ",".join(f"{name}={value}" for name, value in rlimits.items())
    return [sys.executable, "-I", "-S", "-c", SHIM, str(report_fd), str(os.getpid()), str(cgroup or ""), limits, *argv]


def read_report(fd: int) -> ShimReport | None:
    """The shim's report from the read end of its pipe (after it exited); None when it died without one."""
    chunks: list[bytes] = []
    with contextlib.suppress(OSError):
        os.set_blocking(fd, False)
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
    leftovers, _, tracked = b"".join(chunks).decode(errors="replace").partition(" ")
    if not leftovers.isdigit() or tracked not in ("0", "1"):
        return None
    return ShimReport(leftovers=int(leftovers), tracked=tracked == "1")
