"""LocalRunner: the embedded default where no Docker engine answers. Same contract, weaker isolation.

Each task gets a venv cached per requirements hash under ``<cache>/venvs/<hash>``, installed offline from a
host-side wheelhouse. Each run streams the same payload as a container to the same boot script, which unpacks
it into a fresh temp folder; the boot script and everything it starts run in one process group with a
wall-clock timeout (the whole group is killed), an address-space limit (8 GiB by default) and a per-file size
limit. The trusted command and the candidate's worker are separate processes, but of the same user. Where the
kernel has Landlock, the boot confines the process that runs the candidate's code (the worker of a split run,
else the command): it writes only beneath its own temp folder and neither signals nor traces a process outside,
and the worker cannot read the trusted side's folder, the other runs' folders or the task set. The boot is a
child subreaper and ends every process of the run (``setsid`` daemons too) before it reports, so nothing of a
run outlives it. There is no network or pid isolation: the runner says so once, and
every result from it is weaker evidence. Trusted runs (the task's own code) may be forks of a warm boot process
of the venv (``warm_local``, ``harness.warm``), each on its own temp folder; ``close`` ends them.
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
import weakref
from pathlib import Path

from lmrbench.benchmark.sandbox.requirements_source import read_task_requirements
from lmrbench.benchmark.sandbox.warm_local import WarmProcess
from lmrbench.benchmark.sandbox.wheelhouse import (
    HOST,
    build_wheelhouse,
    cache_root,
    requirements_hash,
)
from lmrbench.core.sandbox import RunResult, SandboxKind, Worker, killed_at_timeout, tail
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree
from lmrbench.core.warm_pool import Pool
from lmrbench.errors import EnvironmentUnavailable, LmrError
from lmrbench.fsutil import staging_dir
from lmrbench.harness import payload
from lmrbench.harness.warm import GRACE_SECONDS, new_nonce, ran, request, warm_command, warm_preload
from lmrbench.progress import NullProgress, Progress, check_cancel, stop_on_cancel

WEAKER_ISOLATION = (
    "local runner: tests run as this user, with network access and no pid isolation (a timeout, an "
    "address-space limit, a file size limit, Landlock where the kernel has it, every process of a run ended "
    "before its result is read): weaker evidence; use Docker for untrusted candidates"
)
_OUTPUT_KEEP = 256_000


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
    """Runs commands in a cached venv on this machine."""

    name: SandboxKind = "local"

    def __init__(
        self, *, memory: int | None = 8 << 30, file_size: int = 1 << 30, progress: Progress | None = None,
        warm: bool = True,
    ) -> None:
        self.memory, self.file_size = memory, file_size
        self._progress = progress or NullProgress()
        self._warned = False
        self._lock = threading.Lock()
        self.warm = warm
        """Trusted runs may be served by warm boot processes (``harness.warm``); off on a Ray node."""
        self._warm: Pool[WarmProcess] = Pool()
        weakref.finalize(self, self._warm.close)  # a runner dropped without ``close`` leaves none running

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
        lines = reqs.lines
        final = cache_root() / "venvs" / requirements_hash(lines, HOST)
        with self._lock:
            if (final / "bin" / "python").exists() and not rebuild:
                return str(final)
            check_cancel(cancel)
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
                    from lmrbench.benchmark.sandbox.build_log import failure_headline

                    output = (proc.stdout + proc.stderr).strip()
                    for line in output.splitlines():  # the whole output, shown with -v
                        progress.log(f"pip: {line}")
                    raise EnvironmentUnavailable(f"cannot install the requirements into a venv: "
                                                 f"{failure_headline(output) or 'pip exit ' + str(proc.returncode)}",
                                                 reqs.source or task.path, cause="requirement", output=output)
        return str(final)

    def run(
        self,
        task: Task,
        tree: Tree,
        argv: list[str],
        *,
        timeout: float,
        env: dict[str, str] | None = None,
        out_dir: Path | None = None,
        network: bool = False,
        harness_files: dict[str, bytes] | None = None,
        worker: Worker | None = None,
        cancel: threading.Event | None = None,
        trusted: bool = False,
        preload: tuple[str, ...] = (),
    ) -> RunResult:
        """Run ``argv`` through the boot script in a fresh temp folder, with the task's venv first on PATH;
        ``cancel`` ends every process of the run and raises ``Cancelled``. ``trusted`` (the task's own code):
        the run may be served by a warm boot process of the task's venv (``harness.warm``)."""
        t0 = time.monotonic()
        try:
            venv = Path(self.prepare(task))
            data = payload.payload(tree, harness_files or {}, worker)
        except LmrError as exc:
            return RunResult(None, False, "", time.monotonic() - t0, infra_error=str(exc))
        except OSError as exc:
            return RunResult(None, False, "", time.monotonic() - t0, infra_error=f"cannot read the tree: {exc}")
        runs = _runs_folder()
        with tempfile.TemporaryDirectory(prefix="lmrbench-run-", dir=runs) as tmp:
            base_env = {
                k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST", "VIRTUAL_ENV"))
            }
            full_env = {
                **base_env,
                "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                "VIRTUAL_ENV": str(venv),
            }
            hide = [str(runs), str(task.path.parent)]  # every run's files, the task set's golden code and data
            if trusted and self.warm:
                served = self._run_warm(venv, full_env, runs, tmp, argv, worker, env or {}, hide, data, timeout,
                                        cancel, preload)
                if served is not None:
                    return payload.closing(*served, out_dir)
            command = payload.boot_argv(tmp, argv, worker, timeout=timeout, env=env or {}, ids=None,
                                        hide=hide)
            command[0] = str(venv / "bin" / "python")
            result, stdout = self._spawn(command, Path(tmp), full_env, data, timeout, time.monotonic(), cancel)
            return payload.closing(result, stdout, out_dir)

    def _run_warm(self, venv: Path, full_env: dict[str, str], runs: Path, root: str, argv: list[str],
                  worker: Worker | None, env: dict[str, str], hide: list[str], data: bytes, timeout: float,
                  cancel: threading.Event | None, extra: tuple[str, ...] = ()) -> tuple[RunResult, bytes] | None:
        """The run served by a warm boot process of the venv (started when none is idle); None when none
        could serve it (the caller then runs it cold)."""
        preload = warm_preload(worker.frameworks if worker else (), extra=extra)
        key = (str(venv), tuple(preload))
        warm = self._warm.take(key)
        if warm is None:
            nonce = new_nonce()
            command = warm_command(ids=None, preload=preload, env={}, nonce=nonce)
            command[0] = str(venv / "bin" / "python")
            try:
                warm = WarmProcess(key, nonce, command, full_env, runs, self._limits)
            except OSError:
                return None
        t0 = time.monotonic()
        try:
            with stop_on_cancel(cancel, warm.kill):
                spec = payload.run_spec(root, argv, worker, timeout=timeout, env=env, ids=None,
                                        hide=hide, preload=preload)
                served = warm.serve(request(spec, data, timeout), timeout + GRACE_SECONDS)
        finally:
            self._warm.give(warm)
        return None if served is None else ran(served, timeout, t0)

    def close(self) -> None:
        """End the warm boot processes this runner keeps (the end of a command)."""
        self._warm.close()

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
                if len(outs) < payload.OUT_LIMIT * 2:
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
