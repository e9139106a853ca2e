"""A numpy repository with a label-smoothed cross-entropy that skips ``ignore_index`` targets, and a script that
calls it five times (one call with masked targets, ``epsilon`` always 0.1), made a task by create_task; and
candidate bodies that a model might write: right in another style, or wrong in a plausible way."""

from __future__ import annotations

import textwrap
from pathlib import Path

from helpers.tasks import create_task
from lmrbench.core.taskset import Task

LOSS = '''\
"""Losses of a tiny classifier."""

import numpy as np


def smoothed_cross_entropy(logits, targets, epsilon=0.1, ignore_index=-100):
    """Label-smoothed cross-entropy, averaged over the targets that are not ``ignore_index``.

    logits: (batch, classes); targets: (batch,) class ids, ``ignore_index`` where there is no label;
    epsilon: the mass spread evenly over every class.
    """
    n_classes = logits.shape[-1]
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    valid = targets != ignore_index
    safe = np.where(valid, targets, 0)
    nll = -np.take_along_axis(log_probs, safe[:, None], axis=-1)[:, 0]
    smooth = -log_probs.sum(axis=-1) / n_classes
    loss = (1.0 - epsilon) * nll + epsilon * smooth
    loss = np.where(valid, loss, 0.0)
    return loss.sum() / max(int(valid.sum()), 1)
'''

TRAIN = '''\
"""Five evaluation batches of a random linear classifier: python evaluate.py"""

import numpy as np

from clf.losses import smoothed_cross_entropy


def main():
    rng = np.random.default_rng(0)
    weights = rng.normal(size=(4, 5))
    for step in range(5):
        x = rng.normal(size=(6, 4))
        targets = rng.integers(0, 5, size=6)
        if step == 3:
            targets[[1, 4]] = -100  # padding positions carry no label
        loss = smoothed_cross_entropy(x @ weights, targets, epsilon=0.1)
        print(f"batch {step}: loss {loss:.4f}")


if __name__ == "__main__":
    main()
'''

GOLDEN_OTHER_STYLE = '''\
def smoothed_cross_entropy(logits, targets, epsilon=0.1, ignore_index=-100):
    """Label-smoothed cross-entropy."""
    k = logits.shape[1]
    log_p = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    keep = targets != ignore_index
    total = 0.0
    for i in np.flatnonzero(keep):
        q = np.full(k, epsilon / k)
        q[targets[i]] += 1.0 - epsilon
        total += -(q * log_p[i]).sum()
    return total / max(keep.sum(), 1)
'''

WRONG = {
    "ignores ignore_index": '''\
def smoothed_cross_entropy(logits, targets, epsilon=0.1, ignore_index=-100):
    """Label-smoothed cross-entropy (every target counted)."""
    n = logits.shape[-1]
    log_probs = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) \\
        - logits.max(-1, keepdims=True)
    safe = np.clip(targets, 0, n - 1)
    nll = -log_probs[np.arange(len(targets)), safe]
    smooth = -log_probs.mean(axis=-1)
    return float(((1 - epsilon) * nll + epsilon * smooth).mean())
''',
    "pins epsilon": '''\
def smoothed_cross_entropy(logits, targets, epsilon=0.1, ignore_index=-100):
    """Label-smoothed cross-entropy with the usual smoothing."""
    eps = 0.1
    n = logits.shape[-1]
    log_probs = logits - logits.max(-1, keepdims=True)
    log_probs = log_probs - np.log(np.exp(log_probs).sum(-1, keepdims=True))
    valid = targets != ignore_index
    nll = -log_probs[np.arange(len(targets)), np.where(valid, targets, 0)]
    loss = (1 - eps) * nll + eps * (-log_probs.mean(axis=-1))
    return (loss * valid).sum() / max(valid.sum(), 1)
''',
    "scales the smoothing term": '''\
def smoothed_cross_entropy(logits, targets, epsilon=0.1, ignore_index=-100):
    """Label-smoothed cross-entropy, smoothing over the wrong classes only."""
    n = logits.shape[-1]
    log_probs = logits - logits.max(-1, keepdims=True)
    log_probs = log_probs - np.log(np.exp(log_probs).sum(-1, keepdims=True))
    valid = targets != ignore_index
    nll = -log_probs[np.arange(len(targets)), np.where(valid, targets, 0)]
    smooth = -log_probs.sum(axis=-1) / (n - 1)
    loss = (1 - epsilon) * nll + epsilon * smooth
    return (loss * valid).sum() / max(valid.sum(), 1)
''',
}
"""Plausible wrong answers, by what is wrong."""


def write_repo(root: Path) -> Path:
    """The source repository: clf/losses.py, evaluate.py, requirements.txt."""
    files = {"clf/__init__.py": "", "clf/losses.py": LOSS, "evaluate.py": TRAIN, "requirements.txt": "numpy\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def make_task(tmp: Path) -> Task:
    """The task ``tmp/bench/1-SmoothedCE`` masking ``smoothed_cross_entropy``."""
    source = write_repo(tmp / "src-repo")
    return create_task(source, tmp / "bench", ("clf/losses.py::smoothed_cross_entropy",),
                       category="Training Objectives & Optimization", name="1-SmoothedCE")
