"""LocalRunner: the embedded default where no Docker engine answers. Same contract, weaker isolation.

Each task gets a venv cached per requirements hash under ``<cache>/venvs/<hash>``, installed offline from a
host-side wheelhouse. Each run copies the tree into a fresh temp folder (same layout as a container: ``repo``,
``out``, ``harness``) and runs the command in its own process group with a wall-clock timeout (the whole group
is killed), an address-space limit (8 GiB by default) and a per-file size limit. There is no network or pid
isolation and the code runs as the calling user: the runner says so once.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from lmrbench.benchmark.sandbox.images import task_requirements
from lmrbench.benchmark.sandbox.wheelhouse import (
    HOST,
    build_wheelhouse,
    cache_root,
    requirement_lines,
    requirements_hash,
)
from lmrbench.core.sandbox import RunnerKind, RunResult, tail
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.fsutil import staging_dir
from lmrbench.progress import NullProgress, Progress, check_cancel

WEAKER_ISOLATION = (
    "local runner: tests run as this user, with network access and no pid isolation (only a timeout, "
    "an address-space limit and a file size limit); use Docker for untrusted candidates"
)
_OUTPUT_KEEP = 256_000


def _ignore(folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n in (".git", "__pycache__")}


class LocalRunner:
    """Runs commands in a cached venv on this machine."""

    name: RunnerKind = "local"

    def __init__(
        self, *, memory: int | None = 8 << 30, file_size: int = 1 << 30, progress: Progress | None = None
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
        req = task_requirements(task)
        try:
            lines = requirement_lines(req.read_text(errors="replace")) if req else []
        except LmrError as exc:
            raise LmrError(exc.problem, req) from None
        final = cache_root() / "venvs" / requirements_hash(lines, HOST)
        with self._lock:
            if (final / "bin" / "python").exists() and not rebuild:
                return str(final)
            check_cancel(cancel)
            wheels = build_wheelhouse(lines, HOST, progress=progress)
            with staging_dir(final, replace=True) as tmp:
                subprocess.run([sys.executable, "-m", "venv", str(tmp)], check=True, capture_output=True)
                proc = subprocess.run(
                    [
                        str(tmp / "bin" / "python"),
                        "-m",
                        "pip",
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
                    tail_ = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
                    raise LmrError(f"cannot install the requirements into a venv: {tail_}", req or task.path)
        return str(final)

    def run(
        self,
        task: Task,
        tree: Path,
        argv: list[str],
        *,
        timeout: float,
        env: dict[str, str] | None = None,
        out_dir: Path | None = None,
        network: bool = False,
        harness_files: dict[str, bytes] | None = None,
    ) -> RunResult:
        """Run ``argv`` in a fresh temp copy of ``tree`` with the task's venv first on PATH."""
        t0 = time.monotonic()
        try:
            venv = Path(self.prepare(task))
        except LmrError as exc:
            return RunResult(None, False, "", time.monotonic() - t0, infra_error=str(exc))
        with tempfile.TemporaryDirectory(prefix="lmrbench-run-") as tmp:
            root = Path(tmp)
            try:
                shutil.copytree(tree, root / "repo", symlinks=True, ignore=_ignore)
            except OSError as exc:
                return RunResult(
                    None, False, "", time.monotonic() - t0, infra_error=f"cannot copy the tree: {exc}"
                )
            (root / "out").mkdir()
            (root / "harness").mkdir()
            for name, data in (harness_files or {}).items():
                (root / "harness" / name).write_bytes(data)
            base_env = {
                k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST", "VIRTUAL_ENV"))
            }
            full_env = {
                **base_env,
                **(env or {}),
                "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                "VIRTUAL_ENV": str(venv),
                "LMRBENCH_OUT": str(root / "out"),
                "LMRBENCH_HARNESS": str(root / "harness"),
                "PYTHONPATH": os.pathsep.join(
                    p for p in (str(root / "harness"), (env or {}).get("PYTHONPATH", "")) if p
                ),
                "PYTHONDONTWRITEBYTECODE": "1",
            }
            result = self._spawn(argv, root / "repo", full_env, timeout, time.monotonic())
            if out_dir is not None and result.infra_error is None:
                shutil.copytree(
                    root / "out", out_dir, dirs_exist_ok=True, symlinks=False, ignore_dangling_symlinks=True
                )
        return result

    def _spawn(self, argv: list[str], cwd: Path, env: dict[str, str], timeout: float, t0: float) -> RunResult:
        """Run in its own process group; the timeout counts from ``t0`` (after the venv and the copy)."""
        limit, memory = self.file_size, self.memory

        def limits() -> None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if memory:
                resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=limits,
            )
        except OSError as exc:
            return RunResult(127, False, f"cannot start {argv[0]!r}: {exc}", time.monotonic() - t0)
        chunks: list[bytes] = []

        def pump() -> None:
            kept = 0
            assert proc.stdout is not None
            fd = proc.stdout.fileno()
            for chunk in iter(lambda: os.read(fd, 65536), b""):
                chunks.append(chunk)
                kept += len(chunk)
                while kept > _OUTPUT_KEEP and len(chunks) > 1:
                    kept -= len(chunks.pop(0))

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        timed_out = False
        try:
            proc.wait(timeout=max(0.1, timeout - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        reader.join(timeout=5)
        output = b"".join(chunks).decode("utf-8", errors="replace")
        code = proc.returncode
        exit_code = None if timed_out else (128 - code if code < 0 else code)
        if timed_out:
            output += f"\n[killed: timeout after {timeout:g} s]"
        return RunResult(exit_code, timed_out, tail(output), time.monotonic() - t0)
