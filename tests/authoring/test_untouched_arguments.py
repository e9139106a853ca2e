"""A candidate that writes into its caller's arrays fails where the reference code leaves them as they were: CutMix
pastes a box of a shuffled batch into the batch, and the reference code returns a new batch. Writing the box into
the caller's batch gives the same return value, and corrupts the data the training loop reuses (local sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.record_fixture import grade, recorded_task
from lmrbench.schemas.testrun import TestStatus

AUGMENT = '''\
"""Batch augmentations."""
import numpy as np


def cutmix(images, labels, box, perm):
    """Paste ``box`` (top, left, height, width) of the batch shuffled by ``perm`` into each image; the labels
    mix by the pasted area. Returns the new images and the mixed one-hot labels."""
    top, left, h, w = box
    mixed = images.copy()
    mixed[:, :, top:top + h, left:left + w] = images[perm][:, :, top:top + h, left:left + w]
    lam = 1.0 - (h * w) / (images.shape[2] * images.shape[3])
    return mixed, lam * labels + (1.0 - lam) * labels[perm]
'''

TRAIN = '''\
"""Three steps of augmented batches: python train.py"""
import numpy as np

from aug.augment import cutmix


def main():
    rng = np.random.default_rng(0)
    images = rng.normal(size=(4, 2, 6, 6))
    labels = np.eye(3)[rng.integers(0, 3, size=4)]
    for step in range(3):
        box = (1 + step, 2, 3, 2 + step)
        mixed, mixed_labels = cutmix(images, labels, box, rng.permutation(4))
        print(step, float(mixed.mean()), float(mixed_labels.sum()))


if __name__ == "__main__":
    main()
'''

RIGHT = {
    "np.where over a box mask": '''\
def cutmix(images, labels, box, perm):
    top, left, h, w = box
    mask = np.zeros(images.shape[2:], dtype=bool)
    mask[top:top + h, left:left + w] = True
    lam = 1.0 - mask.mean()
    return np.where(mask, images[perm], images), lam * labels + (1.0 - lam) * labels[perm]
''',
    "a copy, then the box written into it": '''\
def cutmix(images, labels, box, perm):
    top, left, h, w = box
    out = np.array(images, copy=True)
    shuffled = images[perm]
    out[..., top:top + h, left:left + w] = shuffled[..., top:top + h, left:left + w]
    area = h * w / (images.shape[-1] * images.shape[-2])
    return out, (1 - area) * labels + area * labels[perm]
''',
}

WRONG = {
    "writes the box into the caller's batch": '''\
def cutmix(images, labels, box, perm):
    top, left, h, w = box
    shuffled = images[perm]
    images[:, :, top:top + h, left:left + w] = shuffled[:, :, top:top + h, left:left + w]
    lam = 1.0 - (h * w) / (images.shape[2] * images.shape[3])
    return images, lam * labels + (1.0 - lam) * labels[perm]
''',
    "mixes the caller's labels in place": '''\
def cutmix(images, labels, box, perm):
    top, left, h, w = box
    mixed = images.copy()
    mixed[:, :, top:top + h, left:left + w] = images[perm][:, :, top:top + h, left:left + w]
    lam = 1.0 - (h * w) / (images.shape[2] * images.shape[3])
    other = labels[perm]
    labels *= lam
    labels += (1.0 - lam) * other
    return mixed, labels
''',
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    files = {"aug/__init__.py": "", "aug/augment.py": AUGMENT, "train.py": TRAIN}
    return recorded_task(tmp_path_factory.mktemp("cutmix"), "aug/augment.py::cutmix", files, "python train.py")


def _status(recorded, tmp_path: Path, body: str) -> TestStatus:
    task, sandbox = recorded
    return grade(sandbox, task, tmp_path, "aug/augment.py", "import numpy as np\n\n\n" + body)


def test_the_generated_test_checks_the_arguments_the_reference_code_left_alone(recorded):
    task, _ = recorded
    text = (task.repo_dir / "unit_test" / "unit_test_1.py").read_text()
    assert "assert_equal(case.untouched(), case.untouched_as_recorded()" in text


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_candidate_that_writes_into_its_callers_arrays_fails(recorded, tmp_path, name):
    assert _status(recorded, tmp_path, WRONG[name]) == TestStatus.FAILED


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_correct_styles_that_leave_the_callers_arrays_alone_pass(recorded, tmp_path, name):
    assert _status(recorded, tmp_path, RIGHT[name]) == TestStatus.PASSED
