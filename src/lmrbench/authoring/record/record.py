"""Record a task's unit tests from real calls: run the author's command on the golden code with the recorder on,
then hand its output to ``captured_calls`` (which calls become cases) and ``recorded_tests`` (writing them).

The command runs in the task's own sandbox (Docker image or local venv), in the tree validation evaluates (the
masked repository with every goal function spliced from the golden files), with the recording modules first on
the Python path (see ``runtime/lmrbench_record.py``).
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import threading
from pathlib import Path

from lmrbench.authoring.record import testgen
from lmrbench.authoring.record.captured_calls import (
    body_coverage,
    body_models,
    call_shape,
    check_replays,
    pool_calls,
    skipped_calls,
)
from lmrbench.authoring.record.case_files import read_case
from lmrbench.authoring.record.case_probe import probe_calls
from lmrbench.authoring.record.case_selection import Selection, select
from lmrbench.authoring.record.command_check import command_problem
from lmrbench.authoring.record.generated_file import check_replaceable
from lmrbench.authoring.record.recorded_tests import (
    Recording,
    RecordResult,
    checker_by_type,
    default_checker,
    goal_targets,
    test_file_path,
    write_recording,
)
from lmrbench.authoring.record.recording_summary import describe_selection
from lmrbench.core.sandbox import RunResult
from lmrbench.core.source.tree import build_tree
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError, UsageError
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.runtime import RECORD_RUNTIME, runtime_files
from lmrbench.runtime.lmrbench_protocol import ENV_RECORD_SPEC

DEFAULT_MAX_CALLS = 3
DEFAULT_MAX_BYTES = 20_000_000
"""Largest recorded data of one call (arguments, instance, results, random state)."""
DEFAULT_TIMEOUT = 1800.0
POOL_FACTOR = 4
"""Distinct calls saved per goal function and process, as a multiple of the cases kept (see ``pick_cases``)."""
_TAIL_LINES = 15
RECORD_PRELUDE = r"""LMRBENCH_RECORD_ROOT="$PWD"; export LMRBENCH_RECORD_ROOT
_lmrbench_bin=$(mktemp -d) || exit 125
for _lmrbench_py in python python3; do
    _lmrbench_real=$(command -v "$_lmrbench_py") || continue
    printf '#!/bin/sh
PYTHONPATH="%s${PYTHONPATH:+:$PYTHONPATH}" exec "%s" "$@"
'         "$LMRBENCH_HARNESS" "$_lmrbench_real" > "$_lmrbench_bin/$_lmrbench_py"
    chmod 755 "$_lmrbench_bin/$_lmrbench_py"
done
PATH="$_lmrbench_bin:$PATH"; export PATH
"""
"""Run before the author's command: ``python``/``python3`` become wrappers that put the recorder's harness
first on PYTHONPATH, so ``PYTHONPATH=. python train.py`` (which replaces the variable) still records."""


def record_tests(
    task: Task,
    impl_index: int,
    command: str,
    *,
    sandbox: Sandbox,
    max_calls: int = DEFAULT_MAX_CALLS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    self_factory: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    force: bool = False,
    probe: bool = True,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RecordResult:
    """Run ``command`` on the golden code, record the goal functions' calls, write tests and data.

    With ``probe`` (the default), a second run in the sandbox adds cases for parameters the calls never varied
    and finds the mutants each call kills, and the cases are chosen by what they catch (``case_selection``);
    without it, by coverage and call shape only."""
    progress = progress or NullProgress()
    impl = task.info.implementation(impl_index)
    targets = goal_targets(task, impl)
    checker = default_checker(impl)
    if checker.kind not in testgen.CHECKER_KINDS:
        raise LmrError(
            f"unknown checker kind {checker.kind!r}; use one of {', '.join(testgen.CHECKER_KINDS)}",
            task.path / "info.json",
        )
    if max_calls < 1:
        raise UsageError("--max-calls must be at least 1")
    if self_factory is not None and ":" not in self_factory:
        raise UsageError(f"--self-factory {self_factory!r} must look like module:function")
    if (bad := command_problem(command, task.repo_dir)) is not None:  # before minutes of environment build
        raise LmrError(bad, task.repo_dir)
    test_path = test_file_path(task, impl)
    check_replaceable(test_path, force)
    imports = {f: testgen.goal_import(task.repo_dir, f) for f, _ in targets}
    spec = {
        "targets": [{"file": f, "qualname": q} for f, q in targets],
        "max_calls": max_calls * POOL_FACTOR,
        "max_bytes": max_bytes,
        "factory": self_factory,
        "checker": checker.model_dump(),
    }
    with tempfile.TemporaryDirectory(prefix="lmrbench-record-") as tmp:
        tree = build_tree(task, None, "golden", Path(tmp) / "tree")
        out = Path(tmp) / "out"
        out.mkdir()
        check_cancel(cancel)
        progress.start(f"environment of {task.name}", None)
        sandbox.prepare(task, progress=progress, cancel=cancel)
        check_cancel(cancel)
        progress.start(f"running `{command}`", None)
        request = SandboxRequest(task, tree, ["sh", "-c", RECORD_PRELUDE + command], timeout,
                                 env={ENV_RECORD_SPEC: json.dumps(spec)}, harness_files=runtime_files(RECORD_RUNTIME))
        result = sandbox.run(request, out, cancel)
        _check_run(result, command, timeout)
        models = body_models(task, impl, targets)
        pool = pool_calls(out, targets, command)
        probes = {}
        probe_note = ""
        if probe:
            check_cancel(cancel)
            progress.start("trying mutants and varied parameters on the calls", None)
            expected = [read_case(c.path)[0]["expected"] for calls in pool.values() for c in calls]
            try:
                probes = probe_calls(task, impl, sandbox, tree, pool, checker_by_type(impl, expected)[0],
                                     self_factory, Path(tmp) / "probe", cancel)
            except LmrError as exc:  # the recording stands; the cases are then chosen without it
                probe_note = f"note: {exc.problem}; cases chosen by coverage, parameter and special values only"
        selections: dict[str, Selection] = {
            t: select(calls, max_calls, models.get(t), lambda c: call_shape(c.path), probes.get(t), probe)
            for t, calls in pool.items()
        }
        for t, sel in selections.items():
            check_replays(t, sel.kept)
        chosen = {t: sel.kept for t, sel in selections.items()}
        coverage = body_coverage(out, chosen, models)
        skipped = skipped_calls(out)
        for line in skipped:
            progress.log(f"note: call skipped: {line}")
        summary, notes, facts = describe_selection(pool, selections, probes, chosen)
        if probe_note:
            summary.insert(0, probe_note)
            facts = dataclasses.replace(facts, selection=summary)
        recording = Recording(command=command, sandbox=sandbox.name, max_calls=max_calls, factory=self_factory,
                              notes=notes, facts=facts)
        written = write_recording(task, impl, chosen, targets, imports, recording, progress, coverage)
        for line in summary:
            progress.log(line)
        return dataclasses.replace(written, skipped=skipped, summary=summary)


def _tail(output: str) -> str:
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-_TAIL_LINES:]) if lines else "(no output)"


def _check_run(result: RunResult, command: str, timeout: float) -> None:
    if result.infra_error:
        raise LmrError(f"the sandbox failed while running `{command}`: {result.infra_error}")
    if result.timed_out:
        raise LmrError(
            f"`{command}` did not finish within {timeout:g} s; output tail: {_tail(result.output)}"
        )
    if result.exit_code != 0:
        raise LmrError(
            f"`{command}` failed with exit code {result.exit_code}; output tail: {_tail(result.output)}"
        )
