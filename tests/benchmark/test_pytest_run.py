"""Deciding a test run's status from the sealed junit report, the expected ids and the exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lmrbench.core.sandbox import RunResult
from lmrbench.harness.junit import parse_junit
from lmrbench.harness.pytest_run import KEY_FILE, decide, harness_files, pytest_argv
from lmrbench.schemas.testrun import TestStatus

TESTS = """import pytest


def test_ok():
    assert True


def test_bad():
    assert 1 == 2, "one is not two"


@pytest.mark.skip(reason="later")
def test_skipped():
    pass
"""
KEY = b"k" * 32


def _real_run(
    tmp_path: Path, tests: str = TESTS, key: bytes = KEY
) -> tuple[RunResult, bytes | None, bytes | None]:
    """Run real pytest with the harness plugin in the sandbox layout; return its result and report files."""
    repo, out, harness = tmp_path / "repo", tmp_path / "out", tmp_path / "harness"
    for d in (repo, out, harness):
        d.mkdir()
    (repo / "test_it.py").write_text(tests)
    for name, data in harness_files(key).items():
        (harness / name).write_bytes(data)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},  # the outer run's options are not its
        "LMRBENCH_OUT": str(out),
        "LMRBENCH_HARNESS": str(harness),
        "PYTHONPATH": str(harness),
    }
    argv = [sys.executable, *pytest_argv(["test_it.py"])[1:]]
    proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True)
    assert not (harness / KEY_FILE).exists(), "the plugin must delete the key before tests run"
    read = lambda p: p.read_bytes() if p.exists() else None  # noqa: E731
    return (
        RunResult(proc.returncode, False, proc.stdout, 1.0),
        read(out / "junit.xml"),
        read(out / "seal.json"),
    )


def test_real_report_is_parsed_and_a_failure_decides_failed(tmp_path):
    res, junit, seal = _real_run(tmp_path)
    assert junit is not None and seal is not None
    cases = {c.test_id: c for c in parse_junit(junit)}
    assert cases["test_it::test_ok"].outcome == "passed"
    assert (
        cases["test_it::test_bad"].outcome == "failed"
        and "one is not two" in cases["test_it::test_bad"].message
    )
    assert cases["test_it::test_skipped"].outcome == "skipped"
    report = decide(res, junit, seal, KEY, None, sandbox="local")
    assert report.status is TestStatus.FAILED and report.exit_code == 1


def test_all_expected_passing_decides_passed(tmp_path):
    res, junit, seal = _real_run(tmp_path, "def test_ok():\n    pass\n")
    assert decide(res, junit, seal, KEY, ["test_it::test_ok"], sandbox="local").status is TestStatus.PASSED


def test_missing_expected_ids_and_skips_are_not_passes(tmp_path):
    res, junit, seal = _real_run(
        tmp_path, "import pytest\n\ndef test_ok():\n    pass\n\ndef test_later():\n    pytest.skip('no')\n"
    )
    missing = decide(res, junit, seal, KEY, ["test_it::test_ok", "test_it::test_gone"], sandbox="local")
    assert missing.status is TestStatus.ERROR and missing.missing_ids == ["test_it::test_gone"]
    skipped = decide(res, junit, seal, KEY, ["test_it::test_ok", "test_it::test_later"], sandbox="local")
    assert skipped.status is TestStatus.FAILED and "skipped" in skipped.detail


def test_wrong_key_changed_report_or_other_exit_status_is_an_error(tmp_path):
    res, junit, seal = _real_run(tmp_path, "def test_ok():\n    pass\n")
    assert junit is not None
    assert decide(res, junit, seal, b"x" * 32, None, sandbox="local").status is TestStatus.ERROR
    changed = junit.replace(b"test_ok", b"test_ok2")
    assert decide(res, changed, seal, KEY, None, sandbox="local").status is TestStatus.ERROR
    other = RunResult(3, False, "", 1.0)
    report = decide(other, junit, seal, KEY, None, sandbox="local")
    assert report.status is TestStatus.ERROR and "differs" in report.detail
    assert decide(res, None, None, KEY, None, sandbox="local").status is TestStatus.ERROR


def test_collection_error_is_an_error_not_a_failure(tmp_path):
    res, junit, seal = _real_run(tmp_path, "import no_such_module_here\n\ndef test_ok():\n    pass\n")
    report = decide(res, junit, seal, KEY, None, sandbox="local")
    assert report.status is TestStatus.ERROR


@pytest.mark.parametrize(
    ("result", "status"),
    [
        (RunResult(None, True, "", 5.0), TestStatus.TIMEOUT),
        (RunResult(None, False, "", 0.1, infra_error="Docker: engine gone"), TestStatus.INFRA_ERROR),
    ],
)
def test_timeouts_and_infrastructure_errors_keep_their_own_status(result, status):
    report = decide(result, None, None, KEY, ["a::b"], sandbox="docker")
    assert report.status is status and report.exit_code is None


def test_report_round_trips_as_json(tmp_path):
    from lmrbench.schemas.testrun import TestReport

    res, junit, seal = _real_run(tmp_path)
    report = decide(res, junit, seal, KEY, None, sandbox="local")
    back = TestReport.model_validate(json.loads(report.model_dump_json()))
    # everything but the whole output, which is written to its own file and never into the JSON
    assert report.log and "log" not in json.loads(report.model_dump_json())
    assert back == report.model_copy(update={"log": ""})


def test_junit_that_is_not_xml_is_rejected():
    with pytest.raises(ValueError, match="not valid XML"):
        parse_junit(b"PASSED")


SNEAKY = """import os
os.makedirs("b", exist_ok=True)
open("b/conftest.py", "w").write(
    "import pytest\\n"
    "@pytest.hookimpl(hookwrapper=True)\\n"
    "def pytest_runtest_makereport(item, call):\\n"
    "    outcome = yield\\n"
    "    rep = outcome.get_result()\\n"
    "    rep.outcome = 'passed'\\n"
)


def test_a():
    pass
"""


def test_a_conftest_written_during_the_run_is_detected(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a").mkdir()
    (repo / "a" / "test_a.py").write_text(SNEAKY)
    (repo / "b").mkdir()
    (repo / "b" / "test_b.py").write_text("def test_b():\n    assert 1 == 2\n")
    out, harness = tmp_path / "out", tmp_path / "harness"
    out.mkdir(), harness.mkdir()
    for name, data in harness_files(KEY).items():
        (harness / name).write_bytes(data)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},  # the outer run's options are not its
        "LMRBENCH_OUT": str(out),
        "LMRBENCH_HARNESS": str(harness),
        "PYTHONPATH": str(harness),
    }
    proc = subprocess.run([sys.executable, *pytest_argv(["."])[1:]], cwd=repo, env=env, capture_output=True)
    res = RunResult(proc.returncode, False, "", 1.0)
    junit, seal = (out / "junit.xml").read_bytes(), (out / "seal.json").read_bytes()
    assert {c.outcome for c in parse_junit(junit)} == {"passed"}, (
        "the attack must have turned the failure into a pass"
    )
    pristine = tmp_path / "pristine"
    (pristine / "a").mkdir(parents=True)
    report = decide(res, junit, seal, KEY, None, sandbox="local", tree=pristine)
    assert report.status is TestStatus.ERROR and "b/conftest.py" in report.detail
