"""Recorded tests that tell right from wrong, graded in Docker as evaluate grades them: the bundled DPO task
fails a loss that ignores ``beta`` and one that drops label smoothing when ``reference_free`` is set, and a
label-smoothed cross-entropy recorded in Docker fails candidates that ignore ``ignore_index``, pin ``epsilon``
or scale the smoothing term, while the golden code passes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.smoothed_ce import GOLDEN_OTHER_STYLE, WRONG, make_task
from helpers.tasks import tagged
from lmrbench.authoring.record.record import record_tests
from lmrbench.core.taskset import load_task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"

DPO_IGNORES_BETA = '''import numpy as np

from dpo.mathutil import log_sigmoid


def preference_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,
                    reference_rejected_logps, beta, label_smoothing=0.0, reference_free=False):
    """DPO with the usual temperature."""
    logits = (policy_chosen_logps - policy_rejected_logps)
    if not reference_free:
        logits = logits - (reference_chosen_logps - reference_rejected_logps)
    losses = -log_sigmoid(0.1 * logits) * (1 - label_smoothing) - log_sigmoid(-0.1 * logits) * label_smoothing
    return losses, 0.1 * (policy_chosen_logps - reference_chosen_logps), \\
        0.1 * (policy_rejected_logps - reference_rejected_logps)
'''

DPO_RIGHT = DPO_IGNORES_BETA.replace("0.1 *", "beta *").replace("the usual temperature", "its temperature")
DPO_NO_SMOOTHING_WITHOUT_REFERENCE = DPO_RIGHT.replace(
    "    losses = -log_sigmoid(",
    "    if reference_free:\n        label_smoothing = 0.0\n    losses = -log_sigmoid(")


@pytest.fixture(scope="module")
def docker(base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    return Sandbox(DockerRunner(base_image=base_image), warm=False)  # every run cold: none left behind


def grade(sandbox, task, variant):
    return evaluate_variant(sandbox, task, task.info.implementation(1), tagged(variant), timeout=300).status


def candidate(folder: Path, goal: str, source: str) -> Path:
    (folder / goal).parent.mkdir(parents=True, exist_ok=True)
    (folder / goal).write_text(source)
    return folder


def test_bundled_dpo_task_fails_a_loss_that_ignores_beta(tmp_path, docker):
    shutil.copytree(EXAMPLES / "1-DPO", tmp_path / "1-DPO")
    task = load_task(tmp_path / "1-DPO")
    assert grade(docker, task, candidate(tmp_path / "wrong", "dpo/trainers.py", DPO_IGNORES_BETA)) \
        is TestStatus.FAILED
    assert grade(docker, task, candidate(tmp_path / "right", "dpo/trainers.py", DPO_RIGHT)) is TestStatus.PASSED
    no_smoothing = candidate(tmp_path / "no-smoothing", "dpo/trainers.py", DPO_NO_SMOOTHING_WITHOUT_REFERENCE)
    assert grade(docker, task, no_smoothing) is TestStatus.FAILED


def test_smoothed_cross_entropy_recorded_in_docker_rejects_plausible_wrong_answers(tmp_path, docker):
    task = make_task(tmp_path)
    result = record_tests(task, 1, "python evaluate.py", sandbox=docker)
    assert "epsilon was always 0.1 in the recording; added 4 case(s) with epsilon 0.05-0.5" in result.summary
    assert grade(docker, task, "golden") is TestStatus.PASSED
    other = candidate(tmp_path / "other", "clf/losses.py", "import numpy as np\n\n\n" + GOLDEN_OTHER_STYLE)
    assert grade(docker, task, other) is TestStatus.PASSED
    for k, (what, body) in enumerate(sorted(WRONG.items())):
        wrong = candidate(tmp_path / f"wrong{k}", "clf/losses.py", "import numpy as np\n\n\n" + body)
        assert grade(docker, task, wrong) is TestStatus.FAILED, what
