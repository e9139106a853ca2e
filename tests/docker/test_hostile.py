"""Hostile candidates on a small task written here: none passes, the task folder never changes, no container
is left.

Each candidate is a repo-shaped folder whose ``add`` (the goal function of implementation 1) attacks the
harness instead of adding; files it brings besides its goal function are ignored by construction.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from helpers.small_task import CALC_PY, tree_hash, write_candidate, write_task
from helpers.tasks import tagged
from lmrbench.core.taskset import Task, load_task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Golden
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestReport, TestStatus

pytestmark = pytest.mark.docker

ADD_BODY = "    return a + b\n"
PASSING_JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" '
    'skipped="0" tests="2"><testcase classname="unit_test.unit_test_1" name="test_add_small" time="0.001"/>'
    '<testcase classname="unit_test.unit_test_1" name="test_add_negative" time="0.001"/>'
    "</testsuite></testsuites>"
)
FORCE_PASS_CONFTEST = textwrap.dedent('''
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        rep = outcome.get_result()
        rep.outcome = "passed"
''')


def body(code: str) -> str:
    """A function body from dedented code."""
    return textwrap.indent(textwrap.dedent(code).strip("\n") + "\n", "    ")


def hostile_sources(task_path: Path) -> dict[str, tuple[str, dict[str, str]]]:
    """name -> (add's body, extra files the candidate folder carries)."""
    return {
        "deletes_files": (body(f'''
            import os, shutil
            for target in (os.getcwd(), "unit_test", {str(task_path)!r}, os.environ.get("LMRBENCH_OUT", "")):
                shutil.rmtree(target, ignore_errors=True)
            return 0
        '''), {}),
        "kills_itself": (body('''
            import os, signal
            os.kill(os.getpid(), signal.SIGKILL)
        '''), {}),
        "os_exit_0": (body('''
            import os
            os._exit(0)
        '''), {}),
        "prints_passed": (body('''
            print("PASSED")
            print("===== 2 passed in 0.01s =====")
            return 0
        '''), {}),
        "writes_its_own_report": (body(f'''
            import json, os
            out = os.environ.get("LMRBENCH_OUT") or os.path.join(os.path.dirname(os.getcwd()), "out")
            for name in ("junit.xml", "report.xml"):
                with open(os.path.join(out, name), "w") as fh:
                    fh.write({PASSING_JUNIT!r})
            with open(os.path.join(out, "seal.json"), "w") as fh:
                json.dump({{"exitstatus": 0, "hmac": "0" * 64}}, fh)
            os._exit(0)
        '''), {}),
        "writes_conftest": (body(f'''
            for path in ("conftest.py", "unit_test/conftest.py"):
                with open(path, "w") as fh:
                    fh.write({FORCE_PASS_CONFTEST!r})
            return 0
        '''), {"conftest.py": FORCE_PASS_CONFTEST, "unit_test/conftest.py": FORCE_PASS_CONFTEST}),
        "fills_the_disk": (body('''
            chunk = b"x" * (64 << 20)
            try:
                with open("filler.bin", "wb") as fh:
                    for _ in range(48):  # at most 3 GiB even where no limit holds
                        fh.write(chunk)
            except OSError:
                pass
            return 0
        '''), {}),
        "fills_memory": (body('''
            hog = []
            for _ in range(80):  # at most 8 GiB even where no limit holds
                hog.append(bytearray(100 << 20))
            return 0
        '''), {}),
        "hangs": (body('''
            import time
            time.sleep(3600)
        '''), {}),
    }


EXPECTED = {
    "hangs": {TestStatus.TIMEOUT},
    "fills_memory": {TestStatus.FAILED, TestStatus.ERROR},
}


@pytest.fixture(scope="module")
def hostile_task(tmp_path_factory, base_image) -> Task:
    return load_task(write_task(tmp_path_factory.mktemp("hostile") / "bench", "1-Hostile"))


@pytest.fixture(scope="module")
def sandbox(base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    return Sandbox(DockerRunner(base_image=base_image), warm=False)  # every run cold: none left behind


@pytest.fixture(scope="module")
def golden(sandbox, hostile_task) -> TestReport:
    impl = hostile_task.info.implementation(1)
    report = evaluate_variant(sandbox, hostile_task, impl, Golden(), timeout=120)
    assert report.status is TestStatus.PASSED, report.detail + report.log_tail
    return report


def our_containers(engine, task: Task) -> list[str]:
    from helpers.docker_engine import owned_containers

    return [c.id[:12] for c in owned_containers(engine, task=task.name)]


@pytest.mark.parametrize("name", sorted(hostile_sources(Path("/x"))))
def test_hostile_candidate_never_passes(name, sandbox, hostile_task, golden, docker_engine, tmp_path):
    code, extra = hostile_sources(hostile_task.path)[name]
    before = tree_hash(hostile_task.path)
    cand = write_candidate(tmp_path / "cand", CALC_PY.replace(ADD_BODY, code), extra)
    expected = [c.test_id for c in golden.cases]
    timeout = 5 if name == "hangs" else 120  # a hang ends as a timeout whatever the limit: a short one
    report = evaluate_variant(sandbox, hostile_task, hostile_task.info.implementation(1), tagged(cand),
                              timeout=timeout, expected_ids=expected)
    allowed = EXPECTED.get(name, {TestStatus.FAILED, TestStatus.ERROR, TestStatus.INFRA_ERROR})
    assert report.status in allowed, (report.status, report.detail, report.log_tail[-800:])
    assert report.status is not TestStatus.PASSED
    assert tree_hash(hostile_task.path) == before
    assert our_containers(docker_engine, hostile_task) == []


def test_the_run_goes_on_after_the_hostile_candidates(sandbox, hostile_task, golden):
    impl = hostile_task.info.implementation(1)
    again = evaluate_variant(sandbox, hostile_task, impl, Golden(), timeout=120)
    assert again.status is TestStatus.PASSED
    assert [c.test_id for c in again.cases] == [c.test_id for c in golden.cases]
