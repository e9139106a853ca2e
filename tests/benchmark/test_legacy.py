"""Official script-style tests in legacy mode: decided from fresh logs, exit codes and a sealed result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.small_task import CALC_PY, TEST_ADD, TEST_SCALE, tree_hash, write_candidate, write_task
from helpers.tasks import tagged
from lmrbench.core.taskset import load_task
from lmrbench.harness.legacy import is_legacy_test, judge_script, unseal
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Golden, Masked
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

SCALE_BODY = "    out = []\n    for x in xs:\n        out.append(x * k)\n    return out\n"


def scale_candidate(body: str) -> str:
    """The calc module with scale's body replaced (indented 4 spaces)."""
    return CALC_PY.replace(SCALE_BODY, body)


def entry(**kw: object) -> dict[str, object]:
    base: dict[str, object] = {
        "script": "unit_test/unit_test_3.py", "stem": "unit_test_3", "exit_code": 0, "finished": "finished 0",
        "output": "", "logs": {"unit_test_3.log": "Test Passed"},
    }
    base.update(kw)
    return base


def test_judge_follows_the_official_rule_and_the_harness_checks():
    assert judge_script(entry()).outcome == "passed"
    assert judge_script(entry(logs={"other.log": "x - Test Passed"})).outcome == "passed"
    assert judge_script(entry(logs={"unit_test_3.log": "Test Passed\nTest Failed"})).outcome == "failed"
    assert judge_script(entry(logs={"unit_test_3.log": "nothing"})).outcome == "failed"
    assert judge_script(entry(logs={})).message.startswith("no log file")
    assert judge_script(entry(exit_code=1)).message == "exit code 1"
    tb = "Traceback (most recent call last):\n  File x\nValueError"
    assert judge_script(entry(output=tb)).outcome == "failed"
    assert judge_script(entry(finished="")).outcome == "error"


def test_unseal_refuses_a_forged_result():
    key = b"k" * 32
    import hashlib
    import hmac

    payload = json.dumps({"results": [entry()]})
    seal = hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()
    good = json.dumps({"payload": payload, "hmac": seal})
    assert unseal(good.encode(), key) == [entry()]
    assert unseal(good.encode(), b"x" * 32) is None
    assert unseal(json.dumps({"results": [entry()]}).encode(), key) is None
    assert unseal(None, key) is None


def test_detection(tmp_path):
    task = load_task(write_task(tmp_path / "b", legacy=True, dockerfile=False))
    assert is_legacy_test(task.repo_dir / "unit_test" / "unit_test_3.py")
    assert not is_legacy_test(task.repo_dir / "unit_test" / "unit_test_2.py")


@pytest.fixture(params=["local"])
def sandbox(request):
    """The local runner; tests/docker/test_legacy_docker.py runs the tests that take it in Docker."""
    from lmrbench.benchmark.sandbox.running.local import LocalRunner

    return Sandbox(LocalRunner())


@pytest.fixture
def legacy_task(tmp_path):
    return load_task(write_task(tmp_path / "bench", legacy=True))


HOSTILE = {
    # a wrong answer: the script logs "Test Failed" and still exits 0
    "wrong": ("    return [x + k for x in xs]\n", TestStatus.FAILED),
    # prints the verdict itself, then returns a wrong answer
    "prints_passed": ("    print('Test Passed')\n    return [0]\n", TestStatus.FAILED),
    # writes a passing log of its own, then leaves before the script's own logging ends
    "own_log_then_exit": (
        "    import os, pathlib\n    p = pathlib.Path('unit_test/logs')\n    p.mkdir(exist_ok=True)\n"
        "    (p / 'unit_test_3.log').write_text('Test Passed')\n    os._exit(0)\n", TestStatus.FAILED),
    "kills_itself": ("    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n", TestStatus.FAILED),
    # kills the driver and writes a result file where the driver would have
    "forges_driver_result": (
        "    import json, os, signal\n    out = os.path.join(os.path.dirname(os.getcwd()), 'out')\n"
        "    r = [{'script': 'unit_test/unit_test_3.py', 'stem': 'unit_test_3', 'exit_code': 0,\n"
        "          'finished': 'finished 0', 'output': '', 'logs': {'unit_test_3.log': 'Test Passed'}}]\n"
        "    payload = json.dumps({'results': r})\n"
        "    forged = json.dumps({'payload': payload, 'hmac': 'x'})\n"
        "    open(os.path.join(out, 'legacy.json'), 'w').write(forged)\n"
        "    os.kill(os.getppid(), signal.SIGKILL)\n    os._exit(0)\n", TestStatus.FAILED),
}


def test_golden_passes_and_masked_fails(sandbox, legacy_task):
    impl = legacy_task.info.implementation(3)
    golden = evaluate_variant(sandbox, legacy_task, impl, Golden(), timeout=120)
    assert golden.status is TestStatus.PASSED, golden.detail + golden.log_tail
    assert golden.evidence == "legacy" and "weaker" in golden.detail
    masked = evaluate_variant(sandbox, legacy_task, impl, Masked(), timeout=120)
    assert masked.status is TestStatus.FAILED
    assert "exit code 1" in masked.detail


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_legacy_candidates_never_pass(sandbox, legacy_task, tmp_path, name):
    body, _ = HOSTILE[name]
    before = tree_hash(legacy_task.path)
    cand = write_candidate(tmp_path / "cand", scale_candidate(body))
    report = evaluate_variant(sandbox, legacy_task, legacy_task.info.implementation(3), tagged(cand), timeout=120)
    assert report.status in (TestStatus.FAILED, TestStatus.ERROR), (report.status, report.detail)
    assert tree_hash(legacy_task.path) == before


NO_LOG = """from calc import scale

if __name__ == "__main__":
    print("Test Passed" if scale([1], 2) == [2] else "Test Failed")
"""


def test_a_script_that_writes_no_log_fails(sandbox, tmp_path):
    tests = {"unit_test/unit_test_1.py": TEST_ADD, "unit_test/unit_test_2.py": TEST_SCALE,
             "unit_test/unit_test_3.py": NO_LOG}
    task = load_task(write_task(tmp_path / "bench", legacy=True, tests=tests))
    report = evaluate_variant(sandbox, task, task.info.implementation(3), Golden(), timeout=120)
    assert report.status is TestStatus.FAILED
    assert "no log file" in report.detail


def test_stale_logs_in_the_task_never_count(sandbox, tmp_path):
    path = write_task(tmp_path / "bench", legacy=True)
    logs = path / "calc" / "unit_test" / "logs"
    logs.mkdir()
    (logs / "unit_test_3.log").write_text("Test Passed\n")
    task = load_task(path)
    report = evaluate_variant(sandbox, task, task.info.implementation(3), Masked(), timeout=120)
    assert report.status is TestStatus.FAILED
    assert Path(logs / "unit_test_3.log").read_text() == "Test Passed\n"
