"""Split runs whose frameworks the boot imports once and both sides inherit by forking (the zygote), in Docker.

The task's environment holds ``zygoteprobe``, a module written here as a wheel, which keeps the pid of the
process that imported it: a side that sees another pid than its own inherited the module from the boot.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from helpers.small_task import write_candidate, write_task
from helpers.tasks import tagged
from lmrbench.core.taskset import Task, load_task
from lmrbench.harness import spec
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestReport, TestStatus

pytestmark = pytest.mark.docker

PROBE = "import os\n\nPID = os.getpid()\n"

TESTS = {
    "unit_test/unit_test_1.py": '''import os

import zygoteprobe
from calc import add

MARK = "SECRET-QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"  # the trusted tree's bytes: never in the worker


def test_add_small():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-4, 1) == -3


def test_the_probe_was_imported_before_the_fork():
    assert zygoteprobe.PID != os.getpid()
''',
    "unit_test/unit_test_2.py": '''from calc import scale


def test_scale():
    assert scale([1, 2, 3], 2) == [2, 4, 6]
''',
}

CALC = '''import os


def add(a, b):
    {body}


def scale(xs, k):
    return [x * k for x in xs]
'''

INHERITED = '''import zygoteprobe
    if zygoteprobe.PID == os.getpid():
        raise RuntimeError("zygoteprobe was imported afresh in the worker")
    return a + b'''

MEMORY_SCAN = '''mine = "CANDMARKQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"
    run = b"Q" * 40
    found = {b"SECRET-": 0, b"CANDMARK": 0}
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("r"):
                continue
            lo, hi = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except (OSError, OverflowError, ValueError):
                continue
            at = data.find(run)
            while at >= 0:
                for head in found:
                    if data[max(0, at - len(head)):at] == head:
                        found[head] += 1
                at = data.find(run, at + 1)
    raise RuntimeError("FOUND secret %d own %d" % (found[b"SECRET-"], found[b"CANDMARK"]))'''


def probe_wheel(folder: Path) -> Path:
    """A wheel of ``zygoteprobe`` (one module), written by hand."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "zygoteprobe.py": PROBE.encode(),
        "zygoteprobe-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: zygoteprobe\nVersion: 1.0\n",
        "zygoteprobe-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: lmrbench-tests\nRoot-Is-Purelib: true\n"
                                           b"Tag: py3-none-any\n",
    }
    record = [f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
              f"{len(data)}" for name, data in files.items()]
    record.append("zygoteprobe-1.0.dist-info/RECORD,,")
    files["zygoteprobe-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    path = folder / "zygoteprobe-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


@pytest.fixture(scope="module")
def sandbox(base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    return Sandbox(DockerRunner(base_image=base_image), warm=False)  # every run cold: none left behind


@pytest.fixture(scope="module")
def task(tmp_path_factory, base_image) -> Task:
    root = tmp_path_factory.mktemp("zygote")
    wheels = probe_wheel(root / "wheels").parent
    path = write_task(root / "bench", "1-Calc", tests=TESTS)
    (path / "requirements.txt").write_text(f"--find-links {wheels}\nzygoteprobe==1.0\n")
    return load_task(path)


@pytest.fixture
def frameworks(monkeypatch):
    """Set the modules the boot imports before the fork, for every split run of the test."""

    def use(names: list[str]) -> None:
        monkeypatch.setattr(spec, "framework_modules", lambda task, impl: list(names))

    return use


def run(sandbox, task: Task, impl: int, cand: Path) -> TestReport:
    return evaluate_variant(sandbox, task, task.info.implementation(impl), tagged(cand), timeout=120)


def test_both_sides_inherit_the_preloaded_module(sandbox, task, frameworks, tmp_path):
    frameworks(["zygoteprobe"])
    good = write_candidate(tmp_path / "good", CALC.format(body=INHERITED))
    report = run(sandbox, task, 1, good)
    assert report.status is TestStatus.PASSED, (report.detail, report.log_tail)
    assert report.isolation == "split"
    assert "3 passed" in report.log  # pytest's own output still reaches the log

    wrong = write_candidate(tmp_path / "wrong", CALC.format(body=INHERITED.replace("a + b", "a - b")))
    report = run(sandbox, task, 1, wrong)
    assert report.status is TestStatus.FAILED, (report.detail, report.log_tail)
    assert {c.test_id.split("::")[-1] for c in report.cases if c.outcome == "failed"} == {
        "test_add_small", "test_add_negative"}


def test_without_a_preload_each_side_imports_it_afresh(sandbox, task, frameworks, tmp_path):
    frameworks([])
    good = write_candidate(tmp_path / "good", CALC.format(body=INHERITED))
    report = run(sandbox, task, 1, good)
    assert report.status is TestStatus.FAILED
    assert "imported afresh in the worker" in report.log
    assert any(c.test_id.endswith("test_the_probe_was_imported_before_the_fork") and c.outcome == "failed"
               for c in report.cases)


def test_a_preload_of_an_absent_module_still_runs(sandbox, task, frameworks, tmp_path):
    frameworks(["no_such_framework_here"])
    good = write_candidate(tmp_path / "good", CALC.format(body="return a + b"))
    assert run(sandbox, task, 2, good).status is TestStatus.PASSED
    wrong = write_candidate(tmp_path / "wrong", CALC.format(body="return a + b").replace("x * k", "x + k"))
    assert run(sandbox, task, 2, wrong).status is TestStatus.FAILED


def test_the_forked_worker_holds_no_byte_of_the_trusted_tree(sandbox, task, frameworks, tmp_path):
    """The worker scans its own memory for the test file's marker: forked before the boot read the payload,
    it has none, while its own module's marker is found (the scan sees its memory)."""
    frameworks(["zygoteprobe"])
    cand = write_candidate(tmp_path / "scan", CALC.format(body=MEMORY_SCAN))
    report = run(sandbox, task, 1, cand)
    assert report.status is TestStatus.FAILED
    found = next(c.message for c in report.cases if "FOUND" in c.message)
    assert "FOUND secret 0 own " in found and "own 0" not in found, found


def test_the_forked_worker_cannot_read_the_trusted_side(sandbox, task, frameworks, tmp_path):
    frameworks(["zygoteprobe"])
    body = '''try:
        os.listdir("/work/trusted")
        seen = "readable"
    except OSError as exc:
        seen = type(exc).__name__
    raise RuntimeError("TRUSTED %s uid %d" % (seen, os.getuid()))'''
    report = run(sandbox, task, 1, write_candidate(tmp_path / "peek", CALC.format(body=body)))
    assert report.status is TestStatus.FAILED
    seen = next(c.message for c in report.cases if "TRUSTED" in c.message)
    assert "TRUSTED PermissionError" in seen and "uid 0" not in seen, seen
