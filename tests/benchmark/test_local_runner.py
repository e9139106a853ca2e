"""LocalRunner: cached venvs, a fresh copy per run, timeouts that kill the whole process group."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from helpers.progress_lines import Lines
from helpers.run_cache import run_cache
from helpers.vec_task import write_small_task
from lmrbench.benchmark.sandbox.running.local import WEAKER_ISOLATION, LocalRunner
from lmrbench.harness.pytest_run import pytest_request, run_pytest
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Golden
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

TESTS = ["unit_test/test_vec.py"]


@pytest.fixture
def cache(tmp_path_factory, monkeypatch) -> Path:
    root = run_cache(tmp_path_factory)
    monkeypatch.setenv("LMRBENCH_CACHE", str(root))
    return root


def test_golden_passes_masked_fails_and_isolation_is_said_once(cache, small_task, tmp_path):
    lines = Lines()
    runner = Sandbox(LocalRunner(progress=lines))
    report = run_pytest(runner, pytest_request(small_task, small_task.repo_dir, TESTS, 60))
    assert report.status is TestStatus.PASSED, report.detail + report.log_tail
    assert report.sandbox == "local"
    masked = write_small_task(tmp_path / "m", goal="def dot(a, b):\n    raise NotImplementedError\n")
    assert run_pytest(runner, pytest_request(masked, masked.repo_dir, TESTS, 60)).status is TestStatus.FAILED
    assert lines.lines.count(WEAKER_ISOLATION) == 1


def test_a_test_edited_between_two_runs_counts_in_the_next(cache, small_task):
    runner = Sandbox(LocalRunner())
    impl = small_task.info.implementation(1)
    assert evaluate_variant(runner, small_task, impl, Golden(), timeout=60).status is TestStatus.PASSED
    test = small_task.repo_dir / "unit_test" / "test_vec.py"
    test.write_text(test.read_text() + "\n\ndef test_edited():\n    assert False\n")
    report = evaluate_variant(runner, small_task, impl, Golden(), timeout=60)
    assert report.status is TestStatus.FAILED and "test_edited" in report.detail + str(report.cases)


def test_venv_is_cached_per_requirements(cache, tmp_path):
    runner = Sandbox(LocalRunner())
    a = write_small_task(tmp_path / "a")
    b = write_small_task(tmp_path / "b")
    venv = runner.prepare(a)
    assert runner.prepare(b) == venv and Path(venv, "bin", "python").exists()
    assert Path(venv).parent == cache / "venvs"
    c = write_small_task(tmp_path / "c", requirements="iniconfig\n")
    assert runner.prepare(c) != venv


_DAEMON = """
import os, sys, time
out = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # a daemon: its own session, reparented away from its starter
        print("daemon", os.getpid(), file=sys.stderr, flush=True)
        time.sleep(2)
        try:
            open(out, "w").write("passed")
        except OSError as exc:
            print("refused", exc.errno, file=sys.stderr, flush=True)
        time.sleep(60)
    os._exit(0)
time.sleep(0.5)
try:
    open(out + ".direct", "w").write("passed")
except OSError as exc:
    print("direct write refused", exc.errno, file=sys.stderr, flush=True)
time.sleep(float(sys.argv[2]))
"""


@pytest.mark.parametrize("trusted", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize(("timeout", "linger"), [(30, 0), (1.5, 60)])
def test_a_setsid_daemon_is_ended_with_its_run_and_writes_nothing_outside(cache, small_task, tmp_path, timeout,
                                                                          linger, trusted):
    """A result file outside the run's folder: the daemon would rewrite it after the run; it is gone by then
    (a warm boot's run too, whether it ended or was killed at its timeout)."""
    result = tmp_path / "result.json"
    result.write_text("failed")
    runner = Sandbox(LocalRunner())
    try:
        argv = ["python", "-c", _DAEMON, str(result), str(linger)]
        res = runner.run(SandboxRequest(small_task, small_task.repo_dir, argv, timeout,
                                        variant=Golden() if trusted else None))
    finally:
        runner.close()
    assert "direct write refused" in res.output
    pid = int(res.output.split("daemon ", 1)[1].split()[0])
    assert _gone_or_zombie(pid)
    time.sleep(2.5)
    assert result.read_text() == "failed" and not Path(f"{result}.direct").exists()


def _gone_or_zombie(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def test_the_task_folder_is_never_touched(cache, small_task, tmp_path):
    before = sorted(p.relative_to(small_task.path) for p in small_task.path.rglob("*"))
    argv = ["python", "-c", "import shutil; shutil.rmtree('unit_test'); open('new', 'w')"]
    res = Sandbox(LocalRunner()).run(SandboxRequest(small_task, small_task.repo_dir, argv, 30))
    assert res.exit_code == 0
    assert sorted(p.relative_to(small_task.path) for p in small_task.path.rglob("*")) == before


def test_os_exit_after_forging_a_report_is_an_error(cache, tmp_path):
    goal = (
        "import os\nopen(os.path.join(os.environ['LMRBENCH_OUT'], 'junit.xml'), 'w')"
        '.write(\'<testsuites><testsuite><testcase classname="unit_test.test_vec" name="test_dot"/>'
        "</testsuite></testsuites>')\nos._exit(0)\n\n\ndef dot(a, b):\n    return 0\n"
    )
    task = write_small_task(tmp_path / "bench", goal=goal)
    report = run_pytest(Sandbox(LocalRunner()), pytest_request(task, task.repo_dir, TESTS, 60))
    assert report.exit_code == 0 and report.status is TestStatus.ERROR


def test_memory_hog_hits_the_address_space_limit(cache, tmp_path):
    goal = "def dot(a, b):\n    x = bytearray(4 << 30)\n    return 0\n"
    task = write_small_task(tmp_path / "bench", goal=goal)
    report = run_pytest(Sandbox(LocalRunner(memory=1 << 30)), pytest_request(task, task.repo_dir, TESTS, 60))
    assert report.status is TestStatus.FAILED and "MemoryError" in report.cases[0].message


def test_a_torch_requirement_brings_numpy_for_the_split_codec():
    """A split run carries tensors as numpy arrays: the local venv of a torch task without numpy gets it, as a
    Docker task layer does (without it every tensor argument failed to cross)."""
    from lmrbench.benchmark.sandbox.environments.layers import named_companions

    assert named_companions(["torch>=2.1"]) == ["numpy"] and named_companions(["Torch"]) == ["numpy"]
    assert named_companions(["torch", "numpy<2"]) == [] and named_companions(["scipy"]) == []


def test_a_cancelled_run_leaves_the_spec_it_was_started_with(cache, small_task, tmp_path):
    """The spec is written before the command starts and its result added after: a unit cancelled under way
    still says what it ran (its argv, its trees, its variant), and no key."""
    from helpers.cancelling import cancel_once_running
    from helpers.vec_task import GOAL
    from lmrbench.benchmark.execution.unit import Prepared, RunUnit, TaskRef, execute
    from lmrbench.harness.spec import Candidate
    from lmrbench.progress import Cancelled
    from lmrbench.schemas.evidence import RunSpec

    journal = tmp_path / "started"
    spec_file = journal / "run-1" / "spec.json"
    stuck = GOAL.replace("    return sum", "    import time\n    time.sleep(600)\n    return sum")
    unit = RunUnit(key="7-Vec#1", task=TaskRef(small_task.name, str(small_task.path)), impl=1,
                   variant=Candidate(files={"vec.py": stuck}), timeout=900, journal=str(journal))
    sandbox = Sandbox(LocalRunner())
    try:
        ended = cancel_once_running(lambda cancel: execute(unit, small_task, sandbox, Prepared(), cancel=cancel),
                                    spec_file.is_file)
    finally:
        sandbox.close()
    assert isinstance(ended, Cancelled), ended
    spec = RunSpec.model_validate_json(spec_file.read_text())
    assert not spec.ended and spec.exit_code is None and spec.key == ""
    assert spec.variant == "candidate" and not spec.trusted and spec.split
    assert spec.argv[:3] == ["python", "-m", "pytest"] and spec.argv[-1] == TESTS[0]
    assert spec.tree.startswith(str(small_task.repo_dir))
    assert spec.worker_tree.startswith(str(small_task.repo_dir)) and spec.worker_tree.endswith("vec.py")


def test_a_venv_another_process_is_making_is_waited_for_not_made_again(cache, tmp_path, monkeypatch):
    """Two lmrbench processes needing the same venv: the second waits for the machine-wide lock the first holds,
    then takes the venv the first made (before, it made its own and swapped the first's out from under its runs)."""
    import sys
    import threading
    import uuid

    from lmrbench.benchmark.sandbox.environments.machine_lock import MachineLock

    def made_again(*args, **kwargs):
        raise AssertionError("the venv was made a second time")

    held, other = threading.Event(), {}
    enter = MachineLock.__enter__

    def first_the_other_process(self):  # it holds the venv's lock before this process asks
        if self._path.name.startswith("venv-") and not other:
            other["lock"] = MachineLock(self._path.name.removesuffix(".lock"))
            enter(other["lock"])
            held.set()
        return enter(self)

    monkeypatch.setattr(LocalRunner, "_make_venv", made_again)
    monkeypatch.setattr(MachineLock, "__enter__", first_the_other_process)
    task = write_small_task(tmp_path / "a", requirements=f"never-installed-{uuid.uuid4().hex}\n")
    got: list[str] = []
    thread = threading.Thread(target=lambda: got.append(LocalRunner().prepare(task)))
    thread.start()
    assert held.wait(timeout=60)
    final = cache / "venvs" / other["lock"]._path.name.removeprefix("venv-").removesuffix(".lock")
    (final / "bin").mkdir(parents=True)  # what the other process made
    (final / "bin" / "python").symlink_to(sys.executable)
    other["lock"].__exit__()
    thread.join(timeout=60)
    assert got == [str(final)]
