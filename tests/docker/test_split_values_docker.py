"""Split runs in Docker with what research code returns: the task's own namedtuple crosses the process boundary as
a record and compares with the recording by field names and values; float32 tolerances follow the magnitude."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.float_task import DROPPED, REWRITE, SCALED, write_float_task
from helpers.tasks import tagged
from lmrbench.core.taskset import Task, load_task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

OWN_NAMEDTUPLE = REWRITE.replace(
    '    return LossOutput(np.logaddexp(np.float32(0), -logits), chosen, rejected)',
    '    from collections import namedtuple\n\n'
    '    Out = namedtuple("Out", "losses chosen_rewards rejected_rewards")\n'
    '    return Out(np.logaddexp(np.float32(0), -logits), chosen, rejected)',
)
AS_DATACLASS = REWRITE.replace(
    '    return LossOutput(np.logaddexp(np.float32(0), -logits), chosen, rejected)',
    '    import dataclasses\n\n'
    '    Out = dataclasses.make_dataclass("Out", ["losses", "chosen_rewards", "rejected_rewards"])\n'
    '    return Out(np.logaddexp(np.float32(0), -logits), chosen, rejected)',
)


@pytest.fixture(scope="module")
def sandbox(base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    return Sandbox(DockerRunner(base_image=base_image), warm=False)  # every run cold: none left behind


@pytest.fixture(scope="module")
def task(tmp_path_factory) -> Task:
    return load_task(write_float_task(tmp_path_factory.mktemp("floats"), dockerfile=True))


def candidate(dest: Path, source: str) -> Path:
    dest.mkdir(parents=True)
    (dest / "dpo.py").write_text(source)
    return dest


def run(sandbox, task, variant):
    return evaluate_variant(sandbox, task, task.info.implementation(1), tagged(variant), timeout=120)


def test_the_golden_passes_split_and_the_masked_stub_fails(sandbox, task):
    golden = run(sandbox, task, "golden")
    assert golden.status is TestStatus.PASSED and golden.isolation == "split", (golden.detail, golden.log_tail)
    assert run(sandbox, task, "masked").status is TestStatus.FAILED


@pytest.mark.parametrize(
    ("source", "why"),
    [(REWRITE, ""), (OWN_NAMEDTUPLE, ""), (SCALED, "result.losses: "),
     (DROPPED, "result.losses: "), (AS_DATACLASS, "expected a namedtuple")],
    ids=["rewrite-in-another-order", "its-own-namedtuple", "scaled-by-1.01", "term-dropped", "a-dataclass"],
)
def test_candidates_returning_the_tasks_namedtuple_are_graded_by_fields_and_values(source, why, sandbox, task,
                                                                                 tmp_path):
    report = run(sandbox, task, candidate(tmp_path / "cand", source))
    assert report.isolation == "split"
    if not why:
        assert report.status is TestStatus.PASSED, (report.detail, report.log_tail[-2000:])
    else:
        assert report.status is TestStatus.FAILED, (report.detail, report.log_tail[-2000:])
        assert all(why in c.message for c in report.cases), [c.message for c in report.cases]
