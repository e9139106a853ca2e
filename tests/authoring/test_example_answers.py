"""The bundled examples' recorded tests reject the wrong answers an outside review found passing (DPO's beta
left out of the conservative term, contrastive decoding's plausibility mask on untempered logits, BERTScore's F1
set to 0 whenever a side is non-positive) and pass correct answers in other styles, BERTScore's usual
``x / (norm + 1e-12)`` included (local sandbox, graded as evaluate grades)."""

from __future__ import annotations

import pytest

from helpers.example_answers import RIGHT, WRONG
from helpers.tasks import copy_example
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.core.taskset import load_task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Candidate
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

CANDIDATES = [(task, what, TestStatus.FAILED) for task, answers in WRONG.items() for what in answers] + \
    [(task, what, TestStatus.PASSED) for task, answers in RIGHT.items() for what in answers]


@pytest.fixture(scope="module")
def local():
    return Sandbox(LocalRunner())


@pytest.mark.parametrize(("task_name", "what", "expected"), CANDIDATES)
def test_example_grades_a_plausible_answer(tmp_path, local, task_name, what, expected):
    task = load_task(copy_example(task_name, tmp_path / "bench"))
    goal, source = (WRONG if expected is TestStatus.FAILED else RIGHT)[task_name][what]
    (tmp_path / "cand" / goal).parent.mkdir(parents=True)
    (tmp_path / "cand" / goal).write_text(source)
    assert evaluate_variant(local, task, task.info.implementation(1), Candidate(folder=tmp_path / "cand"),
                            timeout=300).status is expected
