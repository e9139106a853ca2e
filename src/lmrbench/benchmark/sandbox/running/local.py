"""LocalRunner: the embedded transport where no Docker engine answers. Same contract, weaker isolation.

Each task gets a venv cached per requirements hash under ``<cache>/venvs/<hash>``, installed offline from a
host-side wheelhouse. Each run's process (the harness's boot script, fed the same payload as a container) starts
in a fresh temp folder; the boot script and everything it starts run in one process group with a wall-clock
timeout (the whole group is killed), an address-space limit (8 GiB by default) and a per-file size limit. The
trusted command and the candidate's worker are separate processes, but of the same user. Where the kernel has
Landlock, the boot confines the process that runs the candidate's code (the worker of a split run, else the
command): it writes only beneath its own temp folder and neither signals nor traces a process outside, and the
worker reads only its own tree and an allow-list (``worker_reads``: the venv, its interpreter and standard
library, shared libraries): not the trusted side's folder, other runs, the task set, nor any copy of recorded
cases elsewhere on the machine.
The boot is a child subreaper and ends every process of the run (``setsid`` daemons too) before it reports, so
nothing of a run outlives it. There is no network or pid isolation: the runner says so once, and every result
from it is weaker evidence. Long-lived processes of the venv (a warm boot, ``warm_local``) get the same limits;
each run they serve gets its own temp folder.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from lmrbench.benchmark.sandbox.environments.layers import named_companions
from lmrbench.benchmark.sandbox.environments.machine_lock import MachineLock
from lmrbench.benchmark.sandbox.environments.requirements_source import read_task_requirements
from lmrbench.benchmark.sandbox.environments.wheelhouse import (
    HOST,
    build_wheelhouse,
    cache_root,
    requirements_hash,
)
from lmrbench.benchmark.sandbox.running.warm_local import ProcessChannel
from lmrbench.core.sandbox import Environment, Output, RunResult, SandboxKind, killed_at_timeout, tail
from lmrbench.core.taskset import Task
from lmrbench.errors import EnvironmentUnavailable, LmrError
from lmrbench.fsutil import staging_dir
from lmrbench.progress import NullProgress, Progress, check_cancel, stop_on_cancel
from lmrbench.runtime.lmrbench_protocol import OUT_LIMIT

WEAKER_ISOLATION = (
    "local runner: tests run as this user, with network access and no pid isolation (a timeout, an "
    "address-space limit, a file size limit, Landlock where the kernel has it, every process of a run ended "
    "before its result is read): weaker evidence; use Docker for untrusted candidates"
)
_OUTPUT_KEEP = 256_000


SYSTEM_READS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32", "/usr/bin", "/bin", "/etc",
                "/proc", "/sys/devices/system/cpu", "/usr/share/zoneinfo")
"""What every process reads besides its interpreter: shared libraries, the loader's and resolver's files, the
process's own /proc, the CPU count, time zones (none holds a task's data)."""


def worker_reads(venv: Path) -> tuple[str, ...]:
    """The allow-list of what a candidate's process may read on this machine (besides its own tree): the
    venv, the interpreter it was made from (its standard library), and ``SYSTEM_READS``. A system interpreter
    (``/usr``, ``/usr/local``) adds only its ``lib`` and ``bin`` folders, never the whole prefix."""
    python = Path(os.path.realpath(venv / "bin" / "python"))
    prefix = python.parents[1]
    own = [prefix / "lib", prefix / "lib64", prefix / "bin"] if str(prefix) in ("/", "/usr", "/usr/local") else [prefix]
    found = [str(p) for p in (venv, *own) if p.exists()]
    return tuple(dict.fromkeys([*found, *(p for p in SYSTEM_READS if os.path.exists(p))]))


def _runs_folder() -> Path:
    """The folder (this user's only) that holds every local run's temp folder: hidden from each worker."""
    path = Path(tempfile.gettempdir()) / f"lmrbench-local-runs-{os.getuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    if path.is_symlink() or path.stat().st_uid != os.getuid():
        raise LmrError("is not this user's own folder; remove it", path)
    return path


def _ignore(folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n in (".git", "__pycache__")}


class LocalRunner:
    """The local transport: a cached venv on this machine (``core.sandbox.Transport``)."""

    name: SandboxKind = "local"

    def __init__(
        self, *, memory: int | None = 8 << 30, file_size: int = 1 << 30, progress: Progress | None = None,
    ) -> None:
        self.memory, self.file_size = memory, file_size
        self._progress = progress or NullProgress()
        self._warned = False
        self._lock = threading.Lock()

    def _say_once(self) -> None:
        with self._lock:
            if not self._warned:
                self._warned = True
                self._progress.log(WEAKER_ISOLATION)

    def prepare(
        self,
        task: Task,
        *,
        rebuild: bool = False,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
    ) -> str:
        """The venv folder for the task's requirements, created from the wheelhouse when missing."""
        progress = progress or self._progress
        self._say_once()
        reqs = read_task_requirements(task)  # requirements.txt, else environment.yml's pip section
        for warning in reqs.warnings:
            progress.log(f"warning: {warning}")
        lines = [*reqs.lines, *named_companions(reqs.lines)]
        final = cache_root() / "venvs" / requirements_hash(lines, HOST)
        with self._lock:
            if (final / "bin" / "python").exists() and not rebuild:
                return str(final)
            check_cancel(cancel)
            # another lmrbench process may be making the same venv: it is made once, and never swapped out from
            # under a process that already runs in it
            with MachineLock(f"venv-{final.name}", cancel):
                if not (final / "bin" / "python").exists() or rebuild:
                    self._make_venv(final, lines, reqs.source or task.path, progress, cancel)
        return str(final)

    @staticmethod
    def _make_venv(final: Path, lines: list[str], source: Path, progress: Progress,
                   cancel: threading.Event | None) -> None:
        """A venv at ``final`` with ``lines`` (and pytest) installed from the wheelhouse; ``source``: the file that
        names the requirements, for an error."""
        wheels = build_wheelhouse(lines, HOST, progress=progress, cancel=cancel)
        with staging_dir(final, replace=True) as tmp:
            # no pip of its own (ensurepip costs 2-3 s of CPU a venv): lmrbench's pip installs into it
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp)], check=True,
                           capture_output=True)
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "--python",
                    str(tmp / "bin" / "python"),
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-index",
                    "--find-links",
                    str(wheels),
                    *lines,
                    "pytest",
                ],
                capture_output=True,
                text=True,
                errors="replace",
            )
            if proc.returncode != 0:
                from lmrbench.benchmark.sandbox.environments.build_log import failure_headline

                output = (proc.stdout + proc.stderr).strip()
                for line in output.splitlines():  # the whole output, shown with -v
                    progress.log(f"pip: {line}")
                raise EnvironmentUnavailable(f"cannot install the requirements into a venv: "
                                             f"{failure_headline(output) or 'pip exit ' + str(proc.returncode)}",
                                             source, cause="requirement", output=output)

    def environment(self, task: Task) -> Environment:
        """The task's venv (installed when missing), this user's environment with the venv first on PATH, and
        what a candidate's process may not read: every run's folder and the task set (its golden code, its
        data)."""
        venv = Path(self.prepare(task))
        runs = _runs_folder()
        base_env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST", "VIRTUAL_ENV"))}
        full_env = {**base_env, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                    "VIRTUAL_ENV": str(venv)}
        return Environment(id=str(venv), key=(str(venv),), reads=worker_reads(venv),
                           options={"env": full_env, "runs": runs})

    @contextlib.contextmanager
    def root(self, environment: Environment, warm_run: int | None) -> Iterator[str]:
        """A fresh temp folder of this user's runs folder, removed after the run (cold or warm alike)."""
        with tempfile.TemporaryDirectory(prefix="lmrbench-run-", dir=environment.options["runs"]) as tmp:
            yield tmp

    def spawn(self, task: Task, environment: Environment, root: str, command: list[str], stdin: bytes, *,
              timeout: float, t0: float, network: bool = False,
              cancel: threading.Event | None = None) -> tuple[RunResult, bytes]:
        """``command`` with the venv's interpreter, in its own process group under this runner's limits, in
        ``root``; see ``_spawn``. ``network`` changes nothing: the local runner never takes it away."""
        argv = [str(Path(environment.id) / "bin" / "python"), *command[1:]]
        return self._spawn(argv, Path(root), environment.options["env"], stdin, timeout, t0, cancel)

    def open(self, task: Task, environment: Environment, command: list[str], on_output: Output,
             on_end: Callable[[], None]) -> ProcessChannel | None:
        """A long-lived process of the venv (a warm boot) in its own session, under this runner's limits."""
        argv = [str(Path(environment.id) / "bin" / "python"), *command[1:]]
        try:
            return ProcessChannel(argv, environment.options["env"], environment.options["runs"], self._limits,
                                  on_output, on_end)
        except OSError:
            return None

    def close(self) -> None:
        """Nothing is kept between runs (the harness keeps the warm processes)."""

    def _limits(self) -> None:
        """Each run's limits, set in the child before it starts: file size, no core dumps, address space."""
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_size, self.file_size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.memory:
            resource.setrlimit(resource.RLIMIT_AS, (self.memory, self.memory))

    def _spawn(
        self, argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes, timeout: float, t0: float,
        cancel: threading.Event | None = None,
    ) -> tuple[RunResult, bytes]:
        """Run in its own process group; the timeout counts from ``t0`` (after the venv and the copy). On
        ``cancel`` the boot is told to end the run (SIGTERM: it ends every process of it, daemons too), and
        ``Cancelled`` is raised once it has."""
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=self._limits,
            )
        except OSError as exc:
            return RunResult(127, False, f"cannot start {argv[0]!r}: {exc}", time.monotonic() - t0), b""
        errs: list[bytes] = []
        outs = bytearray()

        def pump_err() -> None:
            kept = 0
            assert proc.stderr is not None
            for chunk in iter(lambda: os.read(proc.stderr.fileno(), 65536), b""):  # type: ignore[union-attr]
                errs.append(chunk)
                kept += len(chunk)
                while kept > _OUTPUT_KEEP and len(errs) > 1:
                    kept -= len(errs.pop(0))

        def pump_out() -> None:
            assert proc.stdout is not None
            for chunk in iter(lambda: os.read(proc.stdout.fileno(), 65536), b""):  # type: ignore[union-attr]
                if len(outs) < OUT_LIMIT * 2:
                    outs.extend(chunk)

        def feed() -> None:
            assert proc.stdin is not None
            with contextlib.suppress(OSError):
                proc.stdin.write(stdin)
            with contextlib.suppress(OSError):
                proc.stdin.close()

        pumps = [threading.Thread(target=f, daemon=True) for f in (pump_err, pump_out, feed)]
        for t in pumps:
            t.start()
        timed_out = False

        def end() -> None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, signal.SIGTERM)

        try:
            with stop_on_cancel(cancel, end):
                proc.wait(timeout=max(0.1, timeout - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, signal.SIGTERM)  # the boot ends every process of the run, daemons too
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for t in pumps:
            t.join(timeout=5)
        output = b"".join(errs).decode("utf-8", errors="replace")
        code = proc.returncode
        exit_code = None if timed_out else (128 - code if code < 0 else code)
        output = killed_at_timeout(output, timeout) if timed_out else tail(output)
        return RunResult(exit_code, timed_out, output, time.monotonic() - t0), bytes(outs)
