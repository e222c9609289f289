"""`LocalSandbox`: runs a command on this machine, fenced in as far as the host allows.

Always: its own session and process group, under a watcher (`sandbox.exec.shim`) that kills every process the
command started, daemons that left the group included, when it ends, times out, is cancelled or the server dies;
rlimits on address space, CPU time, file size and open files, an environment scrubbed of keys and tokens, a temp
HOME and TMPDIR, output capped to its tail, and a pids cgroup when the host lets us make one. With bubblewrap
(`bwrap`) also: a read-only view of the host, the real HOME and the runtime dirs hidden, no host unix socket
reachable, `.git` read-only, only the workspace and the scratch dir writable, and new network, pid, ipc and uts
namespaces (no network at all; every process dies with the sandbox's init), and the `hidden` paths (the skillbank
data dir) behind empty read-only tmpfs mounts (see `sandbox.exec.view`).

Without bubblewrap the host's files are the user's own files: a test could still open the data dir if it guessed
its path. The sandbox then only keeps the path out of the command's environment (and says so in `warnings`), and
makes the server undumpable, so that a test running as the same (non-root) user cannot read the server's
environment or write to its MCP connection through /proc.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, Field

from sandbox.exec.base import (
    Cancel,
    ExecResult,
    TailBuffer,
    fresh_scratch,
    minimal_roots,
    path_is_under,
    sandbox_env,
    scratch_root,
    scrub_env,
    shell_exit_code,
)
from sandbox.exec.cgroup import PidsCgroup
from sandbox.exec.pump import pump_process
from sandbox.exec.shim import make_undumpable, read_report, settle_args, shim_args
from sandbox.exec.unix_sockets import SYSTEM_DIRS, socket_view
from sandbox.exec.view import (
    MAX_SOCKET_MASKS,
    git_dirs_outside,
    git_guard,
    runtime_args,
    runtime_dirs,
    socket_masks,
)

UNFENCED_WARNING = "files outside the workspace are not protected (no bubblewrap)"
UNMASKED_WARNING = "the skillbank data dir is not hidden from the tests (no bubblewrap); only its path is withheld"
NO_CGROUP_WARNING = "process count not bounded (no pids cgroup here); only the timeout stops a fork bomb"
ESCAPE_WARNING = "the sandbox lost track of the tests' processes (its watcher was killed): some may still be running"
NO_SOCK_DIAG_WARNING = (
    "host unix sockets are found by their bound names only (no sock_diag here): one bound by a relative name, "
    "renamed or hard-linked stays reachable"
)


class LocalConfig(BaseModel):
    """Limits and isolation of the local backend."""

    use_bwrap: bool = True
    """Use bubblewrap when it is installed and works (read-only host, no network)."""
    hide_home: bool = True
    """Under bubblewrap, hide the real HOME behind an empty tmpfs (interpreter dirs inside it stay visible)."""
    max_memory_mb: int = Field(default=8192, ge=64)
    """Address-space rlimit per process, MiB: a 10 GB allocation fails with MemoryError."""
    max_file_mb: int = Field(default=1024, ge=1)
    """Largest file a process may write, MiB."""
    max_open_files: int = Field(default=4096, ge=16)
    max_pids: int = Field(default=512, ge=8)
    """Processes allowed at once, enforced by a pids cgroup when the host permits one."""
    max_output_bytes: int = Field(default=1 << 20, ge=1024)
    """Tail kept of stdout and of stderr, each; the rest is read and dropped."""
    env_passthrough: list[str] = Field(default_factory=list)
    """More host variables to pass to commands (names that look secret are dropped anyway)."""
    kill_grace_s: float = Field(default=3.0, gt=0)
    """After a kill, how long to wait for the processes to go and the pipes to close."""
    interrupt_grace_s: float = Field(default=3.0, ge=0)
    """At the timeout, the command is interrupted first (SIGINT, as Ctrl-C: pytest writes its report of the tests
    that finished) and killed this long after if it has not ended; 0 kills at once."""
    scratch_dir: Path | None = None
    """Host dir for the scratch dirs (HOME, TMPDIR, the junit report); default `<tmp>/skillbank-<uid>-local`."""


class LocalSandbox:
    """Runs commands on the host (see the module docstring for what it isolates)."""

    def __init__(
        self,
        workspace: Path,
        config: LocalConfig | None = None,
        ro_paths: Sequence[Path] = (),
        hidden: Sequence[Path] = (),
    ) -> None:
        self.workspace = workspace.resolve()
        self.config = config or LocalConfig()
        self.ro_paths = [Path(p) for p in ro_paths]
        self.hidden = minimal_roots([Path(p).resolve() for p in hidden])
        self._warnings: list[str] = []
        self._bwrap: str | None = None
        if self.config.use_bwrap:
            found = shutil.which("bwrap")
            problem = probe_bwrap(found) if found else "no bubblewrap"
            if found and problem is None:
                self._bwrap = found
            else:
                self._warnings.append(f"network could not be cut ({problem}): install bubblewrap or use docker")
        else:
            self._warnings.append("network could not be cut (bubblewrap turned off)")
        if self._bwrap is None:
            self._warnings.append(UNFENCED_WARNING)
            if self.hidden:
                self._warnings.append(UNMASKED_WARNING)
        self.name = "local+bwrap" if self._bwrap else "local"

    @property
    def warnings(self) -> list[str]:
        return list(self._warnings)

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        with fresh_scratch(scratch_root(self.config.scratch_dir, "local")) as path:
            yield path

    def close(self) -> None:
        """Nothing is held between runs."""

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        timeout: float,
        env: Mapping[str, str] | None = None,
        scratch: Path | None = None,
        cancel: Cancel | None = None,
    ) -> ExecResult:
        if scratch is None:
            with self.scratch() as fresh:
                return self.run(command, cwd=cwd, timeout=timeout, env=env, scratch=fresh, cancel=cancel)
        run_env = sandbox_env(scratch, scrub_env(os.environ, env, self.config.env_passthrough, self.hidden))
        if self._bwrap:
            run_env["TMPDIR"] = "/tmp"  # <scratch>/tmp is bound there: the tests' paths stay as short as bare pytest's
        program = command[0] if command else ""
        if not (shutil.which(program, path=run_env["PATH"]) if "/" not in program else (cwd / program).exists()):
            message = f"skillbank sandbox: cannot run {program!r}: not found\n"
            return ExecResult(exit_code=127, stdout="", stderr=message, stderr_bytes=len(message), duration_s=0.0)
        if self._bwrap is None:
            make_undumpable()  # the command is this process's grandchild and has our uid: see `make_undumpable`
        group = PidsCgroup.create(self.config.max_pids)
        if group is None:
            self._warn(NO_CGROUP_WARNING)
        guard = git_guard(self.workspace, scratch_root(self.config.scratch_dir, "local")) if self._bwrap else None
        try:
            with guard or contextlib.nullcontext([]) as git:
                argv = (
                    [*self._bwrap_args(cwd, scratch, git, run_env.get("PATH", "")), *settle_args(list(command))]
                    if self._bwrap
                    else list(command)
                )
                return self._execute(argv, cwd, timeout, run_env, group, cancel)
        finally:
            if group is not None:
                group.remove()

    def _execute(
        self,
        argv: list[str],
        cwd: Path,
        timeout: float,
        env: dict[str, str],
        group: PidsCgroup | None,
        cancel: Cancel | None = None,
    ) -> ExecResult:
        report_read, report_write = os.pipe()
        shim = shim_args(report_write, self._rlimits(timeout), group.procs_file if group else None, argv)
        out, err = TailBuffer(self.config.max_output_bytes), TailBuffer(self.config.max_output_bytes)
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                shim,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=(report_write,),
            )
        except BaseException:
            os.close(report_read)
            raise
        finally:
            os.close(report_write)
        try:
            stopped = pump_process(proc, out, err, deadline=start + timeout, cancel=cancel)
            if stopped and not (cancel is not None and cancel.is_set()) and self.config.interrupt_grace_s:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGUSR1)  # the shim interrupts the tree: a report of what finished
                grace = time.monotonic() + self.config.interrupt_grace_s
                pump_process(proc, out, err, deadline=grace, cancel=cancel)
        finally:
            leftovers = self._kill_everything(proc, group, report_read)
            proc.wait()
            pump_process(proc, out, err, deadline=time.monotonic() + self.config.kill_grace_s, until_exit=False)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        cancelled = stopped and cancel is not None and cancel.is_set()
        timed_out = stopped and not cancelled
        return ExecResult(
            exit_code=None if stopped else shell_exit_code(proc.returncode),
            stdout=out.text(),
            stderr=err.text(),
            stdout_bytes=out.total,
            stderr_bytes=err.total,
            timed_out=timed_out,
            duration_s=round(time.monotonic() - start, 3),
            killed_leftovers=leftovers,
            cancelled=cancelled,
        )

    def _kill_everything(self, proc: subprocess.Popen[bytes], group: PidsCgroup | None, report_fd: int) -> bool:
        """Kill what the command left (the shim's tree, its process group, the cgroup); True when it had ended
        but left live processes behind. Warns when processes may have got away (the shim was killed)."""
        ended = proc.poll() is not None
        if not ended:  # timeout or cancel: the shim kills the whole tree, orphans included, and reports
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(self.config.kill_grace_s)
        try:
            report = read_report(report_fd) if proc.poll() is not None else None
        finally:
            os.close(report_fd)
        if group is not None:
            in_group = ended and any(_is_live(pid) for pid in group.pids())
        else:
            in_group = ended and _group_has_live_members(proc.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if group is not None:
            group.kill_all(timeout=self.config.kill_grace_s)
        if (report is None or not report.tracked) and (group is None or os.geteuid() == 0):
            self._warn(ESCAPE_WARNING)
        return in_group or (ended and report is not None and report.leftovers > 0)

    def _warn(self, warning: str) -> None:
        if warning not in self._warnings:
            self._warnings.append(warning)

    def _rlimits(self, timeout: float) -> dict[str, int]:
        mib = 1024 * 1024
        return {
            "RLIMIT_AS": self.config.max_memory_mb * mib,
            "RLIMIT_FSIZE": self.config.max_file_mb * mib,
            "RLIMIT_NOFILE": self.config.max_open_files,
            "RLIMIT_CPU": int(timeout * (os.cpu_count() or 1)) + 5,
            "RLIMIT_CORE": 0,
        }

    def _bwrap_args(self, cwd: Path, scratch: Path, git: list[str], path_var: str = "") -> list[str]:
        """The bubblewrap command line: the host read-only; HOME, /tmp and the runtime dirs (daemon sockets)
        empty; the interpreter dirs among them, the scratch dir and the workspace bound again; `git` (keeping
        `.git` read-only) and the hidden paths' masks on top; `/dev/null` over every other host socket, and where a
        socket's names are not all known (see `sandbox.exec.unix_sockets`), its file system hidden but for the dirs
        the run needs (`path_var` is the run's PATH: its dirs are among them)."""
        assert self._bwrap is not None
        args = [self._bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]
        args += ["--cap-drop", "ALL"]
        hidden = [home] if self.config.hide_home and (home := _home()) is not None else []
        for path in hidden:
            args += ["--tmpfs", str(path)]
        runtime = runtime_dirs()
        git_outside = git_dirs_outside(self.workspace)
        path_dirs = [Path(p) for p in path_var.split(os.pathsep) if p.startswith("/")]
        needed = [self.workspace, cwd, scratch, *self.ro_paths, *git_outside, *path_dirs, *SYSTEM_DIRS]
        skip = [*hidden, *runtime, Path("/tmp"), *self.hidden, Path("/dev"), Path("/proc"), Path("/sys")]
        unlocated, sockets, by_inode = socket_view(_resolved(needed), skip)
        if not by_inode:
            self._warn(NO_SOCK_DIAG_WARNING)
        if unlocated:
            names = ", ".join(map(str, unlocated[:8])) + (", ..." if len(unlocated) > 8 else "")
            self._warn(
                f"hidden from the tests: {names} (a host unix socket on that file system is hard-linked from "
                "a dir not known: not all its paths are)"
            )
        for path in unlocated:
            args += ["--tmpfs", str(path)]
        args += runtime_args(runtime)
        args += ["--bind", str(scratch / "tmp"), "/tmp", "--bind", str(scratch), str(scratch)]
        # The fresh HOME and /tmp hide what was there: bring back, read-only, the interpreter dirs among it
        # (a checkout or a virtualenv under /tmp, as CI may have) and the git dirs outside the workspace that git
        # in it uses (a worktree's, the enclosing repo's of a subdir).
        covered = [*hidden, *runtime, Path("/tmp"), *unlocated]
        shown = [self.workspace]
        for root in minimal_roots([*self.ro_paths, *git_outside]):
            if path_is_under(root, covered) and not path_is_under(root, [scratch]) and root.exists():
                args += ["--ro-bind", str(root), str(root)]
                shown.append(root)
        args += self._mask_args(inside_workspace=False)
        args += ["--bind", str(self.workspace), str(self.workspace)]
        args += git
        args += self._mask_args(inside_workspace=True)
        args += [arg for path in self.hidden if path.is_dir() for arg in ("--remount-ro", str(path))]
        unseen = [*self.hidden, scratch, Path("/dev"), Path("/proc")]
        masks, left_out = socket_masks(sockets, covered=covered, shown=shown, unseen=unseen)
        if left_out:
            self._warn(f"{left_out} host unix sockets stay reachable (only {MAX_SOCKET_MASKS} are hidden)")
        args += masks
        args += ["--chdir", str(cwd)]
        return [*args, "--"]

    def _mask_args(self, inside_workspace: bool) -> list[str]:
        """Empty tmpfs mounts over the hidden paths inside (or outside) the workspace; files get /dev/null.

        Those outside go before the workspace is bound, so that a workspace inside the data dir stays visible;
        those inside go after it, so that a project-local SKILLBANK_HOME is covered too.
        """
        args: list[str] = []
        for path in self.hidden:
            if path_is_under(path, [self.workspace]) != inside_workspace:
                continue
            if path.is_dir():
                args += ["--perms", "0555", "--tmpfs", str(path)]
            elif path.exists():
                args += ["--ro-bind", "/dev/null", str(path)]
        return args


def _home() -> Path | None:
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError):
        return None
    return None if home == Path("/") else home


def _resolved(paths: Sequence[Path]) -> list[Path]:
    """`paths` with their links resolved (what the sandbox shows is the real tree), those missing left out."""
    found: list[Path] = []
    for path in paths:
        with contextlib.suppress(OSError, RuntimeError):
            found.append(path.resolve(strict=True))
    return list(dict.fromkeys(found))


def _proc_stat(pid: int | str) -> tuple[str, list[str]] | None:
    """(command name, the fields after it) of /proc/PID/stat; None when the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.find("(") + 1 : stat.rfind(")")], stat[stat.rfind(")") + 2 :].split()


def _is_live(pid: int | str) -> bool:
    """A process that is neither dead, a zombie nor exiting (`PF_EXITING`), and not bubblewrap's own init (it exits
    with the sandbox)."""
    stat = _proc_stat(pid)
    if stat is None or stat[0] == "bwrap" or stat[1][0] in "ZXx":
        return False
    return not (len(stat[1]) > 6 and stat[1][6].isdigit() and int(stat[1][6]) & 0x4)


def _group_has_live_members(pgid: int) -> bool:
    """Whether a live process is in process group `pgid` (read from /proc; False where there is no /proc)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return False
    for entry in proc.iterdir():
        if entry.name.isdigit():
            stat = _proc_stat(entry.name)
            if stat and len(stat[1]) > 2 and stat[1][2] == str(pgid) and _is_live(entry.name):
                return True
    return False


@lru_cache(maxsize=4)
def probe_bwrap(bwrap: str) -> str | None:
    """None when bubblewrap can make the namespaces we use here, else why not."""
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid"]
    args += ["--die-with-parent", "--cap-drop", "ALL", "--", "true"]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap failed: {exc}"
    if proc.returncode != 0:
        return f"bubblewrap failed: {proc.stderr.strip()[:200] or f'exit {proc.returncode}'}"
    return None
