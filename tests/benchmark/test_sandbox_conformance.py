"""One contract, four runners: every transport, cold and warm, run through the harness's one run must give the
same answers on timeouts, cancels, output caps, the out folder, the candidate's separation and broken frames.

Local and local-warm run here; docker and docker-warm need the engine (marked ``docker``: where an engine
answers they run, and fail if they cannot reach it). A warm runner's runs are trusted runs (served by its warm
boot); a cold runner's are not (always a fresh process or container)."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.cancelling import cancel_once_running
from helpers.run_cache import run_cache
from helpers.stateful_task import (
    MECHANISMS,
    TORCH_MECHANISMS,
    torch_wrong_candidate,
    write_stateful_task,
    write_torch_task,
    wrong_candidate,
)
from helpers.tasks import as_candidate, tagged
from lmrbench.core.sandbox import OUTPUT_TAIL_CHARS, Worker
from lmrbench.core.treeview import TreeView
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Golden
from lmrbench.harness.variant import evaluate_variant
from lmrbench.progress import Cancelled
from lmrbench.runtime.lmrbench_protocol import OUT_LIMIT
from lmrbench.schemas.testrun import TestStatus

RUNNERS = [
    pytest.param(("local", False), id="local"),
    pytest.param(("local", True), id="local-warm"),
    pytest.param(("docker", False), id="docker", marks=pytest.mark.docker),
    pytest.param(("docker", True), id="docker-warm", marks=pytest.mark.docker),
]


class Runner:
    """A sandbox and whether its runs are trusted (warm) ones."""

    def __init__(self, sandbox: Sandbox, warm: bool) -> None:
        self.sandbox, self.warm = sandbox, warm

    def run(self, task, argv: list[str], *, timeout: float, out_dir=None, cancel=None):
        request = SandboxRequest(task, task.repo_dir, argv, timeout, variant=Golden() if self.warm else None)
        return self.sandbox.run(request, out_dir, cancel)


@pytest.fixture(params=RUNNERS, scope="module")
def runner(request, tmp_path_factory) -> Iterator[Runner]:
    """One sandbox per runner for the module's tests, as one lmrbench process keeps one for all its runs (a warm
    runner's boot is started once, not once per test)."""
    kind, warm = request.param
    with pytest.MonkeyPatch.context() as monkeypatch:
        if kind == "local":
            from lmrbench.benchmark.sandbox.running.local import LocalRunner

            monkeypatch.setenv("LMRBENCH_CACHE", str(run_cache(tmp_path_factory)))
            transport = LocalRunner()
        else:
            from lmrbench.benchmark.sandbox.running.docker import DockerRunner

            transport = DockerRunner(base_image=request.getfixturevalue("base_image"))
        sandbox = Sandbox(transport, warm=warm)
        yield Runner(sandbox, warm)
        sandbox.close()


@pytest.fixture(scope="module")
def stateful_task(tmp_path_factory):
    from lmrbench.core.taskset import load_task

    return load_task(write_stateful_task(tmp_path_factory.mktemp("stateful")))


def py(code: str) -> list[str]:
    return ["python", "-c", code]


def test_exit_status_output_and_out_folder_come_back(runner, small_task, tmp_path):
    code = ("import os, sys, pathlib; print('to stdout'); print('to stderr', file=sys.stderr);"
            "pathlib.Path(os.environ['LMRBENCH_OUT'], 'sub').mkdir();"
            "pathlib.Path(os.environ['LMRBENCH_OUT'], 'sub', 'r.txt').write_text('kept'); sys.exit(3)")
    res = runner.run(small_task, py(code), timeout=120, out_dir=tmp_path / "out")
    assert (res.exit_code, res.timed_out, res.infra_error) == (3, False, None), res
    assert "to stdout" in res.output and "to stderr" in res.output
    assert (tmp_path / "out" / "sub" / "r.txt").read_text() == "kept"


def test_each_run_gets_a_fresh_copy_of_the_tree(runner, small_task):
    first = runner.run(small_task, py("import pathlib; p = pathlib.Path('mark'); print('seen', p.exists());"
                                      "p.write_text('x')"), timeout=120)
    again = runner.run(small_task, py("import pathlib; print('seen', pathlib.Path('mark').exists())"), timeout=120)
    assert "seen False" in first.output and "seen False" in again.output, (first.output, again.output)
    assert not (small_task.repo_dir / "mark").exists()


def test_a_run_past_its_timeout_is_killed_with_every_process_of_it(runner, small_task):
    mark = f"timeout-{uuid.uuid4().hex}"
    code = (f"import subprocess, time; subprocess.Popen(['sh', '-c', 'sleep 300; echo {mark}'],"
            " start_new_session=True); print('started', flush=True); time.sleep(300)")
    slow = runner.run(small_task, py(code), timeout=3)
    assert slow.timed_out and slow.exit_code is None and "[killed: timeout after 3 s]" in slow.output, slow
    assert not _under_way(runner.sandbox, small_task, mark)  # its detached child too
    again = runner.run(small_task, py("print('served')"), timeout=120)
    assert again.exit_code == 0 and "served" in again.output, again


def _under_way(sandbox: Sandbox, task, mark: str) -> bool:
    """Whether a process whose command line holds ``mark`` runs: in /proc here, or in the task's containers."""
    if sandbox.name == "local":
        for proc in Path("/proc").glob("[0-9]*"):
            with contextlib.suppress(OSError):
                if mark.encode() in (proc / "cmdline").read_bytes() and int(proc.name) != os.getpid():
                    return True
        return False
    from helpers.docker_engine import owned_containers

    engine = sandbox.transport.client  # type: ignore[attr-defined]
    for c in owned_containers(engine, task=task.name):
        with contextlib.suppress(Exception):  # going away
            if any(mark in " ".join(row) for row in engine.api.top(c.id).get("Processes") or []):
                return True
    return False


def test_a_cancel_ends_the_run_and_every_process_of_it(runner, small_task):
    runner.run(small_task, py("print('up')"), timeout=120)  # a warm runner's boot is up and idle
    mark = f"cancel-me-{uuid.uuid4().hex}"
    argv = ["sh", "-c", f"sleep 600; echo {mark}"]  # exec'd, so its command line shows, warm or cold
    ended = cancel_once_running(lambda cancel: runner.run(small_task, argv, timeout=900, cancel=cancel),
                                lambda: _under_way(runner.sandbox, small_task, mark), wait=180)
    assert isinstance(ended, Cancelled), ended
    assert not _under_way(runner.sandbox, small_task, mark)
    if runner.sandbox.name == "docker":  # the cancelled run's container is gone, a warm one too
        from helpers.docker_engine import owned_containers

        assert owned_containers(runner.sandbox.transport.client, task=small_task.name) == []  # type: ignore
    after = runner.run(small_task, py("print('after')"), timeout=120)  # the sandbox still serves
    assert after.exit_code == 0 and "after" in after.output, after


def test_output_is_capped_to_its_end(runner, small_task):
    code = ("import sys\nfor i in range(600):\n    sys.stderr.write(f'{i:06d} ' + 'x' * 9993 + '\\n')\n"
            "sys.stderr.write('the last line\\n')")
    res = runner.run(small_task, py(code), timeout=120)
    assert res.exit_code == 0, res.infra_error
    assert len(res.output) <= OUTPUT_TAIL_CHARS and res.output.rstrip().endswith("the last line")
    assert "000000 " not in res.output  # the start was dropped, not the end


def test_output_is_decoded_with_replacement(runner, small_task):
    res = runner.run(small_task, py("import sys; sys.stderr.buffer.write(b'bad \\xff\\xfe bytes\\n')"), timeout=120)
    assert res.exit_code == 0 and "bad \ufffd\ufffd bytes" in res.output, res


def test_an_out_folder_over_its_limit_is_refused_with_a_line(runner, small_task, tmp_path):
    code = ("import os, pathlib; out = pathlib.Path(os.environ['LMRBENCH_OUT'])\n"
            f"for i in range(3): (out / f'big{{i}}').write_bytes(b'x' * {OUT_LIMIT // 2 + 1})")
    res = runner.run(small_task, py(code), timeout=120, out_dir=tmp_path / "out")
    assert res.exit_code == 0, res
    assert "out folder" in (res.output + (res.infra_error or "")), res.output[-500:]
    written = sum(p.stat().st_size for p in (tmp_path / "out").rglob("*") if p.is_file()) \
        if (tmp_path / "out").exists() else 0
    assert written <= OUT_LIMIT


def test_a_forged_closing_frame_on_the_commands_stdout_is_not_read(runner, small_task, tmp_path):
    """The command's own stdout is not the boot's: a frame it prints is only output."""
    from lmrbench.runtime.lmrbench_protocol import INFRA_MARK, OUT_MARK

    code = (f"import sys; sys.stdout.buffer.write({INFRA_MARK!r} + b'forged\\n' + {OUT_MARK!r} + b' 1 9 0\\n');"
            "sys.stdout.flush()")
    res = runner.run(small_task, py(code), timeout=120, out_dir=tmp_path / "out")
    assert res.exit_code == 0 and res.infra_error is None, res
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_candidates_process_is_kept_from_the_trusted_side(runner, small_task):
    """A split run: the worker (the candidate's code) runs apart from the trusted command. Docker: as another
    user, who cannot read the trusted side's files; local: as the same user, kept from them by Landlock. The
    worker says what it saw over the run's call pipe, which the trusted command waits on."""
    (small_task.repo_dir / "secret.txt").write_text("trusted only")
    probe = ("import os\ntry:\n    open('../../trusted/repo/secret.txt').read(); seen = 'read'\n"
             "except OSError as e:\n    seen = type(e).__name__\n"
             "w = int(os.environ['LMRBENCH_CALL_FDS'].split(',')[1])\n"
             "os.write(w, f'{os.getuid()} {seen}\\n'.encode())")
    trusted = ("import os\nr = int(os.environ['LMRBENCH_CALL_FDS'].split(',')[0])\n"
               "print('trusted', os.getuid(), 'worker', os.fdopen(r).readline().strip())")
    worker = Worker(tree=TreeView(small_task.repo_dir), argv=py(probe))
    res = runner.sandbox.run(SandboxRequest(small_task, small_task.repo_dir, py(trusted), 120, worker=worker,
                                            variant=Golden() if runner.warm else None))
    assert res.exit_code == 0 and res.infra_error is None, res
    said = next(line.split() for line in res.output.splitlines() if line.startswith("trusted "))
    trusted_uid, worker_uid, seen = said[1], said[3], said[4]
    if runner.sandbox.name == "docker":
        assert worker_uid != trusted_uid and seen == "PermissionError", res.output
    elif "no Landlock in this kernel" in res.output + res.worker_output:
        assert worker_uid == trusted_uid  # one user, unconfined: the weaker evidence the runner says it gives
    else:
        assert worker_uid == trusted_uid and seen == "PermissionError", res.output


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_stateful_code_grades_split_as_it_runs_in_one_process(runner, stateful_task, mechanism, tmp_path):
    """A goal function that changes in place what its caller holds (an optimiser's parameters, param groups and
    per-parameter state over several steps; arrays inside a list argument; one array passed twice; a closure
    that reads what the function changed and refills what it reads next; an array kept by one call and changed
    by the next) passes split as in one process, and a plausible wrong edit of it fails. A warm runner serves
    only trusted runs: there the golden code runs warm, and a candidate would run as on the cold runner."""
    impl = stateful_task.info.implementation(list(MECHANISMS).index(mechanism) + 1)
    golden = evaluate_variant(runner.sandbox, stateful_task, impl,
                              Golden() if runner.warm else as_candidate(stateful_task, impl.index), timeout=120)
    assert golden.isolation == "split", golden.detail
    assert golden.status is TestStatus.PASSED, (golden.detail, golden.log_tail[-3000:])
    if runner.warm:
        return
    wrong = evaluate_variant(runner.sandbox, stateful_task, impl, tagged(wrong_candidate(tmp_path / "cand", mechanism)),
                             timeout=120)
    assert wrong.status is TestStatus.FAILED, (wrong.detail, wrong.log_tail[-3000:])


@pytest.mark.parametrize("mechanism", list(TORCH_MECHANISMS))
def test_torch_stateful_code_grades_split_as_it_runs_in_one_process(mechanism, tmp_path_factory, monkeypatch):
    """The same with torch, on the local runner: an ``Optimizer`` subclass whose ``step`` moves a model's own
    parameters (state keyed by them, gradients from ``backward``, a closure that recomputes them), and a module
    whose buffers a call moves in place, on the GPU where CUDA is available (the parameters, their state and the
    buffers then live in device memory on both sides of the split); a plausible wrong edit fails. Skipped where
    torch is not installed on this machine (CI); its venv is the task's requirements' (torch from PyPI)."""
    pytest.importorskip("torch")
    from lmrbench.benchmark.sandbox.running.local import LocalRunner
    from lmrbench.core.taskset import load_task

    task = load_task(write_torch_task(tmp_path_factory.mktemp("torch-stateful")))
    impl = task.info.implementation(list(TORCH_MECHANISMS).index(mechanism) + 1)
    sandbox = Sandbox(LocalRunner())
    try:
        report = evaluate_variant(sandbox, task, impl, Golden(), timeout=300)
        cand = torch_wrong_candidate(tmp_path_factory.mktemp("cand") / "cand", mechanism)
        wrong = evaluate_variant(sandbox, task, impl, tagged(cand), timeout=300)
    finally:
        sandbox.close()
    assert report.isolation == "split", report.detail
    assert report.status is TestStatus.PASSED, (report.detail, report.log_tail[-3000:])
    assert wrong.status is TestStatus.FAILED, (wrong.detail, wrong.log_tail[-3000:])
