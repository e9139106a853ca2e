"""DockerRunner against the real engine: image caching, isolation, limits, and hostile candidates."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import docker
import pytest

from helpers.docker_engine import owned_containers
from helpers.vec_task import dedent, write_small_task
from lmrbench.benchmark.sandbox.environments.containers import RUN_LABEL
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.core.taskset import load_task
from lmrbench.errors import LmrError
from lmrbench.harness.pytest_run import pytest_request, run_pytest
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.schemas.testrun import TestStatus

pytestmark = pytest.mark.docker
TESTS = ["unit_test/test_vec.py"]


@pytest.fixture
def runner(base_image) -> DockerRunner:
    return Sandbox(DockerRunner(base_image=base_image))


def _leftover_containers(client, task) -> list:
    return owned_containers(client, task=task.name)


def _hostile(tmp_path: Path, body: str):
    """A task whose goal function is ``body`` (the hostile candidate), golden tests unchanged."""
    goal = "import os, sys\n\n\ndef dot(a, b):\n" + "".join(
        f"    {line}\n" for line in dedent(body).splitlines()
    )
    return write_small_task(tmp_path / "bench", goal=goal)


def test_golden_passes_and_masked_fails(runner, small_task, tmp_path):
    report = run_pytest(runner, pytest_request(small_task, small_task.repo_dir, TESTS, 60))
    assert report.status is TestStatus.PASSED, report.detail + report.log_tail
    assert [c.test_id for c in report.cases] == [
        "unit_test.test_vec::test_dot",
        "unit_test.test_vec::test_dot_empty",
    ]
    assert report.sandbox == "docker" and report.exit_code == 0

    masked = _hostile(tmp_path / "m", "raise NotImplementedError")
    report = run_pytest(runner, pytest_request(masked, masked.repo_dir, TESTS, 60))
    assert report.status is TestStatus.FAILED
    assert "NotImplementedError" in report.cases[0].message


@pytest.mark.long
def test_image_is_reused_when_nothing_changed_and_rebuilt_when_asked(runner, small_task, docker_engine):
    tag = runner.prepare(small_task)
    first = docker_engine.images.get(tag).id
    assert runner.prepare(small_task) == tag
    assert docker_engine.images.get(tag).id == first
    assert tag.startswith("lmrbench-task-7-vec:")
    assert runner.prepare(small_task, rebuild=True) == tag
    assert docker_engine.images.get(tag).id != first
    try:
        left = docker_engine.images.get(first)
    except docker.errors.ImageNotFound:
        left = None
    # the image it replaced is gone, or still another task's (tasks of one environment share it): never dangling
    assert left is None or (left.tags and tag not in left.tags), left.tags


def test_changing_requirements_changes_the_image_tag(runner, tmp_path):
    a = write_small_task(tmp_path / "a")
    b = write_small_task(tmp_path / "b", requirements="iniconfig\n")
    assert runner.prepare(a) != runner.prepare(b)


def test_a_dockerfile_that_fails_names_the_task_and_shows_the_log_tail(runner, small_task):
    df = small_task.path / "Dockerfile"
    # an author's own Dockerfile (no lmrbench mark) is built as it is, with the task folder as its context
    df.write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo broken-step-marker && exit 3\n")
    with pytest.raises(LmrError) as err:
        runner.prepare(small_task)
    assert "7-Vec" in str(err.value) and "broken-step-marker" in str(err.value)


def test_numpy_task_builds_from_the_wheelhouse_without_an_index(runner, tmp_path):
    tests = (
        "import numpy as np\nfrom vec import dot\n"
        "\n\ndef test_np():\n    assert dot(np.ones(3), np.ones(3)) == 3\n"
    )
    task = write_small_task(tmp_path / "b", requirements="numpy\n", tests=tests)
    report = run_pytest(runner, pytest_request(task, task.repo_dir, TESTS, 120))
    assert report.status is TestStatus.PASSED, report.detail + report.log_tail


def test_runs_as_non_root_without_network_on_a_copy(runner, small_task, tmp_path):
    out = tmp_path / "out"
    code = (
        "import os, socket, pathlib\n"
        "print('uid', os.getuid())\n"
        "pathlib.Path(os.environ['LMRBENCH_OUT'], 'seen.txt').write_text(sorted(os.listdir('.'))[0])\n"
        "import shutil; shutil.rmtree('unit_test')\n"
        "socket.create_connection(('1.1.1.1', 53), timeout=3)\n"
    )
    res = runner.run(SandboxRequest(small_task, small_task.repo_dir, ["python", "-c", code], 60), out)
    assert "uid 1000" in res.output
    assert res.exit_code != 0 and ("Network is unreachable" in res.output or "Errno" in res.output)
    assert (out / "seen.txt").read_text() == "unit_test"
    assert (small_task.repo_dir / "unit_test" / "test_vec.py").is_file()


def test_os_exit_zero_at_import_is_not_a_pass(runner, tmp_path):
    goal = "import os\nprint('2 passed PASSED')\nos._exit(0)\n\n\ndef dot(a, b):\n    return 0\n"
    task = write_small_task(tmp_path / "bench", goal=goal)
    report = run_pytest(runner, pytest_request(task, task.repo_dir, TESTS, 60))
    assert report.exit_code == 0
    assert report.status is TestStatus.ERROR, report


FORGED = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="2">
<testcase classname="unit_test.test_vec" name="test_dot" time="0.001"/>
<testcase classname="unit_test.test_vec" name="test_dot_empty" time="0.001"/></testsuite></testsuites>"""


def test_a_forged_report_and_seal_are_detected(runner, tmp_path):
    goal = (
        f"import json, os\nout = os.environ.get('LMRBENCH_OUT', '.')\nFORGED = {FORGED!r}\n"
        "open(os.path.join(out, 'junit.xml'), 'w').write(FORGED)\n"
        "json.dump({'exitstatus': 0, 'hmac': '0' * 64}, open(os.path.join(out, 'seal.json'), 'w'))\n"
        "os._exit(0)\n\n\ndef dot(a, b):\n    return 0\n"
    )
    task = write_small_task(tmp_path / "bench", goal=goal)
    report = run_pytest(runner, pytest_request(task, task.repo_dir, TESTS, 60))
    assert report.status is TestStatus.ERROR
    assert "not sealed" in report.detail


def test_a_report_rewritten_after_the_session_is_detected(runner, tmp_path):
    goal = (
        f"import atexit, os\nFORGED = {FORGED!r}\n"
        "path = os.path.join(os.environ['LMRBENCH_OUT'], 'junit.xml')\n"
        "atexit.register(lambda: open(path, 'w').write(FORGED))"
        "\n\n\ndef dot(a, b):\n    return 0\n"
    )
    task = write_small_task(tmp_path / "bench", goal=goal)
    report = run_pytest(runner, pytest_request(task, task.repo_dir, TESTS, 60))
    assert report.status is TestStatus.ERROR and "not sealed" in report.detail


def test_a_candidate_that_kills_its_own_process_is_an_error(runner, tmp_path):
    task = _hostile(tmp_path, "import signal\nos.kill(os.getpid(), signal.SIGKILL)")
    report = run_pytest(runner, pytest_request(task, task.repo_dir, TESTS, 60))
    assert report.status is TestStatus.ERROR and report.exit_code == 137


def test_memory_hog_is_stopped_by_the_limit(base_image, tmp_path, docker_engine):
    runner = Sandbox(DockerRunner(base_image=base_image, memory="256m"))
    task = _hostile(tmp_path, "x = bytearray(1 << 30)\nx[::4096] = b'1' * len(x[::4096])\nreturn 0")
    report = run_pytest(runner, pytest_request(task, task.repo_dir, TESTS, 60))
    assert report.status in (TestStatus.FAILED, TestStatus.ERROR)
    assert "MemoryError" in report.log_tail or "out of memory" in report.log_tail
    assert _leftover_containers(docker_engine, task) == []


def test_filling_the_disk_stops_at_the_work_folder_limit(base_image, small_task):
    runner = Sandbox(DockerRunner(base_image=base_image, work_size="32m", tmp_size="16m"))
    code = "open('big', 'wb').write(b'0' * (256 << 20))"
    res = runner.run(SandboxRequest(small_task, small_task.repo_dir, ["python", "-c", code], 60))
    assert res.exit_code == 1 and "No space left on device" in res.output
    res = runner.run(SandboxRequest(small_task, small_task.repo_dir, ["sh", "-c", "echo x > /home/x || echo denied"],
                                    60))
    assert "Read-only file system" in res.output


def test_pid_limit_holds(base_image, small_task):
    runner = Sandbox(DockerRunner(base_image=base_image, pids=16))
    code = (
        "import threading, time\n"
        "for i in range(64):\n    threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
    )
    res = runner.run(SandboxRequest(small_task, small_task.repo_dir, ["python", "-c", code], 60))
    assert res.exit_code == 1 and "can't start new thread" in res.output


def test_this_engine_enforces_every_limit(runner):
    assert runner.transport.limits_warnings() == []


def test_existing_uid_and_gid_do_not_break_the_build(base_image, tmp_path):
    task = write_small_task(tmp_path).path
    # 65534 is nobody/nogroup in Debian: the user and group already exist in the base image.
    runner = Sandbox(DockerRunner(base_image=base_image, uid=65534, gid=65534))
    res = runner.run(SandboxRequest(load_task(task), task / "vecrepo",
                                    ["sh", "-c", "id -u; python -m pytest -q unit_test"], 120))
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "65534" and "2 passed" in res.output


def test_an_official_style_dockerfile_still_builds_where_its_base_exists(base_image, tmp_path):
    task = write_small_task(tmp_path, name="3-Tiny").path
    (task / "Dockerfile").write_text(
        f"FROM {base_image}\nARG UID\nARG GID\nARG DIR\nWORKDIR /workspace\nCOPY . .\n"
    )
    logged: list[str] = []

    class Log:
        def start(self, label, total):
            pass

        def advance(self, n=1, detail=""):
            pass

        def log(self, line):
            logged.append(line)

    runner = Sandbox(DockerRunner(base_image=base_image))
    tag = runner.prepare(load_task(task), progress=Log())
    try:
        assert tag.startswith("lmrbench-task-3-tiny:")
        assert any(line.startswith("warning:") and "golden files" in line for line in logged)
        res = runner.run(SandboxRequest(load_task(task), task / "vecrepo", ["ls", "/workspace"], 60))
        assert "info.json" in res.output.split()
    finally:
        runner.transport.client.images.remove(tag)


def test_default_sandbox_is_docker_when_the_engine_answers():
    from lmrbench.benchmark.execution.sandboxes import get_sandbox

    assert isinstance(get_sandbox(None).transport, DockerRunner)
    assert get_sandbox("local").name == "local"
    with pytest.raises(LmrError, match="unknown runner 'podman'"):
        get_sandbox("podman")  # type: ignore[arg-type]


def test_two_jobs_of_one_task_share_one_image(runner, small_task):
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        tags = list(pool.map(lambda _: runner.prepare(small_task), range(2)))
        reports = list(
            pool.map(
                lambda _: run_pytest(runner, pytest_request(small_task, small_task.repo_dir, TESTS, 60)), range(2)
            )
        )
    assert tags[0] == tags[1]
    assert [r.status for r in reports] == [TestStatus.PASSED, TestStatus.PASSED]


def test_containers_of_a_vanished_harness_are_removed_and_live_ones_kept(base_image, docker_engine):
    import socket
    import subprocess

    from lmrbench.benchmark.sandbox.environments.containers import OWNER_LABEL, remove_stale_containers

    gone = subprocess.Popen(["true"])
    gone.wait()
    made = {}
    for who, pid in (("gone", gone.pid), ("live", os.getpid())):
        labels = {RUN_LABEL: "stale-test", OWNER_LABEL: f"{socket.gethostname()}:{pid}"}
        made[who] = docker_engine.containers.create(base_image, ["true"], labels=labels)
    try:
        removed = remove_stale_containers(docker_engine)
        # another lmrbench command of the machine (a parallel test) may sweep the gone owner's container first
        assert made["live"].name not in removed
        names = [
            c.name
            for c in docker_engine.containers.list(all=True, filters={"label": f"{RUN_LABEL}=stale-test"})
        ]
        assert names == [made["live"].name]
    finally:
        for c in made.values():
            with contextlib.suppress(Exception):
                c.remove(force=True)


INTERRUPTED = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from helpers.vec_task import write_small_task
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
task = write_small_task(Path({root!r}), name="8-Interrupt")
Sandbox(DockerRunner(base_image={base!r})).run(SandboxRequest(task, task.repo_dir, ["sleep", "120"], 120))
"""


def test_ctrl_c_during_a_run_leaves_no_container(base_image, docker_engine, tmp_path):
    import signal
    import subprocess
    import sys

    code = INTERRUPTED.format(tests=str(Path(__file__).parents[1]), root=str(tmp_path), base=base_image)
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 90
        while not owned_containers(docker_engine, proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert owned_containers(docker_engine, proc.pid), "the run never started"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) != 0
    finally:
        proc.kill()
    assert owned_containers(docker_engine, proc.pid) == []


def test_a_tree_too_big_for_the_work_folder_is_an_infrastructure_error(base_image, small_task, tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "blob.bin").write_bytes(os.urandom(24 << 20))
    runner = Sandbox(DockerRunner(base_image=base_image, work_size="8m"))
    res = runner.run(SandboxRequest(small_task, tree, ["true"], 60))
    assert res.infra_error and "cannot unpack the tree" in res.infra_error
    report = run_pytest(runner, pytest_request(small_task, tree, TESTS, 60))
    assert report.status is TestStatus.INFRA_ERROR
