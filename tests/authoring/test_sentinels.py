"""Settings and entries the driver leaves at a sentinel: a ``filter_value`` of -inf (a setting like any other,
varied to finite values of its sign) and logits with a banned token (-inf), which a body that reduces with a
nan-aware call (``np.nansum(p * log_p)``) is written for. Tested both ways: the wrong answer each exposes fails,
correct answers in other styles pass."""

from __future__ import annotations

import pytest

from helpers.record_fixture import grade, recorder
from lmrbench.schemas.testrun import TestStatus

HEAD = '''import numpy as np


def entropy_filter(scores, threshold=1.0, filter_value=-np.inf):
    """The logits ``scores`` (batch, vocab; -inf marks a banned token) whose surprisal is within ``threshold`` of
    their row's entropy; the others become ``filter_value``."""
'''
GOLDEN = HEAD + '''    shifted = scores - scores.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    probs = np.exp(log_probs)
    entropy = -np.nansum(probs * log_probs, axis=-1, keepdims=True)
    return np.where(np.abs(-log_probs - entropy) <= threshold, scores, filter_value)
'''
DRIVER = '''import numpy as np

from decoding.entropy import entropy_filter

rng = np.random.default_rng(0)
for _ in range(3):
    print(np.isfinite(entropy_filter(rng.normal(size=(4, 10)))).sum())
'''
UNGUARDED = GOLDEN.replace("np.nansum(", "np.sum(")
PINNED = GOLDEN.replace("scores, filter_value)", "scores, -np.inf)")
MASKED = HEAD + '''    shifted = scores - scores.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    probs = np.exp(log_probs)
    with np.errstate(invalid="ignore"):
        terms = np.where(probs > 0, probs * log_probs, 0.0)
    entropy = -terms.sum(axis=-1, keepdims=True)
    out = scores.copy()
    out[np.abs(-log_probs - entropy) > threshold] = filter_value
    return out
'''
ROWS = HEAD + '''    import math

    out = np.array(scores, dtype=float)
    for row in out:
        top = max(row)
        total = sum(math.exp(s - top) for s in row)
        logp = [s - top - math.log(total) for s in row]
        h = -sum(math.exp(lp) * lp for lp in logp if lp != -math.inf)
        for j, lp in enumerate(logp):
            if not abs(-lp - h) <= threshold:
                row[j] = filter_value
    return out
'''
TASKS = {"entropy": ("decoding/entropy.py::entropy_filter",
                     {"decoding/__init__.py": "", "decoding/entropy.py": GOLDEN, "run.py": DRIVER},
                     "decoding/entropy.py")}
CANDIDATES = [
    ("entropy not guarded against banned tokens (np.sum)", UNGUARDED, TestStatus.FAILED),
    ("filter_value pinned to -inf", PINNED, TestStatus.FAILED),
    ("terms masked where the probability is 0, then assigned", MASKED, TestStatus.PASSED),
    ("row by row in plain floats", ROWS, TestStatus.PASSED),
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return recorder(tmp_path_factory, TASKS)


@pytest.mark.parametrize(("what", "source", "status"), CANDIDATES, ids=[c[0] for c in CANDIDATES])
def test_a_sentinel_the_driver_never_leaves_tells_right_from_wrong(recorded, tmp_path, what, source, status):
    task, sandbox = recorded("entropy")
    assert grade(sandbox, task, tmp_path / "candidate", TASKS["entropy"][2], source) is status, what
