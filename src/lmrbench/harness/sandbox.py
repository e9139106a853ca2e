"""A run, written once over any transport: the payload in, a warm boot or a cold process, the closing frame out.

A transport (``core.sandbox.Transport``: the Docker runner, the local runner) prepares a task's environment and
spawns processes in it; what runs there is the harness's: the runtime's boot script, fed a payload (``payload``)
on its stdin, which unpacks the trees, starts the trusted command (and the candidate's worker of a split run) and
writes the closing frame. Trusted runs (the task's own code, never a candidate's) may be served by a warm boot
the harness keeps in a keyed pool (``warm``): one per environment and set of preloaded modules, each run still a
fresh fork on fresh copies.
"""

from __future__ import annotations

import threading
import time
import weakref
from pathlib import Path

from lmrbench.core.sandbox import Environment, RunResult, SandboxKind, Transport, Worker
from lmrbench.core.taskset import Task
from lmrbench.core.warm_pool import Pool
from lmrbench.errors import LmrError
from lmrbench.harness import payload
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.warm import (
    GRACE_SECONDS,
    Streams,
    WarmBoot,
    new_nonce,
    ran,
    request,
    warm_command,
    warm_preload,
)
from lmrbench.progress import Progress, check_cancel, stop_on_cancel


class Sandbox:
    """Runs a task's commands on copies of trees through one transport; ``warm``: trusted runs may be served by
    warm boots (off on a Ray node, whose runs are one-off)."""

    def __init__(self, transport: Transport, *, warm: bool = True) -> None:
        self.transport = transport
        self.warm = warm
        self._pool: Pool[WarmBoot] = Pool()
        weakref.finalize(self, self._pool.close)  # a sandbox dropped without ``close`` leaves none running

    @property
    def name(self) -> SandboxKind:
        """The transport's kind: docker or local."""
        return self.transport.name

    def prepare(self, task: Task, *, rebuild: bool = False, progress: Progress | None = None,
                cancel: threading.Event | None = None) -> str:
        """Make the task's environment ready (image or venv, cached by hash); return its id."""
        return self.transport.prepare(task, rebuild=rebuild, progress=progress, cancel=cancel)

    def run(self, request: SandboxRequest, out_dir: Path | None = None,
            cancel: threading.Event | None = None) -> RunResult:
        """Run the request's command in a fresh copy of its tree (never the tree itself) and return how it
        ended; the out folder's files are written under ``out_dir``. ``cancel`` ends the run (every process of
        it) and raises :class:`~lmrbench.progress.Cancelled`. When the code under test is the task's own (the
        request's variant says so), a warm boot that imported its ``preload`` (and the worker's frameworks, and
        pytest) once may serve it."""
        t0 = time.monotonic()
        task, argv, worker, timeout = request.task, request.argv, request.worker, request.timeout
        try:
            environment = self.transport.environment(task)
            data = payload.payload(request.tree, request.harness_files, worker)
        except LmrError as exc:
            return RunResult(None, False, "", time.monotonic() - t0, infra_error=str(exc))
        except OSError as exc:
            return RunResult(None, False, "", time.monotonic() - t0, infra_error=f"cannot read the tree: {exc}")
        run_env = {**request.env, **environment.env}
        if request.warm_ok and self.warm:
            served = self._run_warm(task, environment, argv, worker, run_env, data, timeout, cancel,
                                    request.preload)
            if served is not None:
                return payload.closing(*served, out_dir)
            check_cancel(cancel)  # a warm boot killed by the cancel is no reason to start a cold one
        with self.transport.root(environment, None) as root:
            command = payload.boot_argv(root, argv, worker, timeout=timeout, env=run_env, ids=environment.ids,
                                        reads=list(environment.reads) if environment.reads else None)
            result, stdout = self.transport.spawn(task, environment, root, command, data, timeout=timeout,
                                                  t0=time.monotonic(), network=request.network, cancel=cancel)
        return payload.closing(result, stdout, out_dir)

    def _run_warm(self, task: Task, environment: Environment, argv: list[str], worker: Worker | None,
                  env: dict[str, str], data: bytes, timeout: float, cancel: threading.Event | None,
                  preload: tuple[str, ...]) -> tuple[RunResult, bytes] | None:
        """The run served by a warm boot of the environment (started when none is idle); None when none could
        serve it (the caller then runs it cold)."""
        modules = warm_preload(worker.frameworks if worker else (), preload)
        key = (environment.key, tuple(modules))
        boot = self._pool.take(key)
        if boot is None:
            nonce = new_nonce()
            streams = Streams(nonce)
            command = warm_command(ids=environment.ids, preload=modules, env=environment.env, nonce=nonce)
            channel = self.transport.open(task, environment, command, streams.feed, streams.close)
            if channel is None:
                return None
            boot = WarmBoot(key, streams, channel)
        t0 = time.monotonic()
        try:
            with stop_on_cancel(cancel, boot.kill), self.transport.root(environment, boot.runs + 1) as root:
                spec = payload.run_spec(root, argv, worker, timeout=timeout, env=env, ids=environment.ids,
                                        reads=list(environment.reads) if environment.reads else None,
                                        preload=modules)
                served = boot.serve(request(spec, data, timeout), timeout + GRACE_SECONDS)
        finally:
            self._pool.give(boot)
        return None if served is None else ran(served, timeout, t0)

    def close(self) -> None:
        """End the warm boots this sandbox keeps, then what the transport keeps (the end of a command)."""
        self._pool.close()
        self.transport.close()
