"""Inputs and settings the driver leaves at one form, which the body is written for in others; the recorded tests
reach them on their own. A ``filter_value`` of -inf is a setting like any other (varied to finite values of its
sign), and logits with a banned token (-inf) go to a body that reduces with a nan-aware call
(``np.nansum(p * log_p)``); text always given with single spaces goes to a body that splits on runs of whitespace
(``str.split()``) also with doubled ones; a function whose docstring also takes one item without its batch axis
(``[T, B] (or [T] for one environment)``) gets one item alone, where the golden code gives what the batch gave it;
a mask of the leading axes of (batch, seq, dim) vectors that the driver never passes is given one;
a setting varied to where the golden code's result is no longer finite (a horizon of 0: numpy's inf, where plain
floats raise) makes no case, while one the body writes itself (``-np.inf`` for a beam shorter than ``min_length``)
is in its domain.
Each is tested both ways: the wrong answer it exposes fails, correct answers in other styles pass."""

from __future__ import annotations

from helpers.record_fixture import graded_both_ways
from lmrbench.schemas.testrun import TestStatus

ENTROPY_HEAD = '''import numpy as np


def entropy_filter(scores, threshold=1.0, filter_value=-np.inf):
    """The logits ``scores`` (batch, vocab; -inf marks a banned token) whose surprisal is within ``threshold`` of
    their row's entropy; the others become ``filter_value``."""
'''
ENTROPY_GOLDEN = ENTROPY_HEAD + '''    shifted = scores - scores.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    probs = np.exp(log_probs)
    entropy = -np.nansum(probs * log_probs, axis=-1, keepdims=True)
    return np.where(np.abs(-log_probs - entropy) <= threshold, scores, filter_value)
'''
ENTROPY_DRIVER = '''import numpy as np

from decoding.entropy import entropy_filter

rng = np.random.default_rng(0)
for _ in range(3):
    print(np.isfinite(entropy_filter(rng.normal(size=(4, 10)))).sum())
'''
UNGUARDED = ENTROPY_GOLDEN.replace("np.nansum(", "np.sum(")
PINNED = ENTROPY_GOLDEN.replace("scores, filter_value)", "scores, -np.inf)")
MASKED = ENTROPY_HEAD + '''    shifted = scores - scores.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    probs = np.exp(log_probs)
    with np.errstate(invalid="ignore"):
        terms = np.where(probs > 0, probs * log_probs, 0.0)
    entropy = -terms.sum(axis=-1, keepdims=True)
    out = scores.copy()
    out[np.abs(-log_probs - entropy) > threshold] = filter_value
    return out
'''
ROWS = ENTROPY_HEAD + '''    import math

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
F1_HEAD = '''from collections import Counter


def unigram_f1(hypothesis, references):
    """The best F1 of the hypothesis's tokens against any reference's (each text split on runs of whitespace);
    0.0 when either side has no token."""
'''
F1_GOLDEN = F1_HEAD + '''    hyp = Counter(hypothesis.split())
    best = 0.0
    for ref in references:
        gold = Counter(ref.split())
        common = sum((hyp & gold).values())
        if common:
            p, r = common / sum(hyp.values()), common / sum(gold.values())
            best = max(best, 2 * p * r / (p + r))
    return best
'''
F1_DRIVER = '''from metrics.f1 import unigram_f1

pairs = [("the cat sat on the mat", ["a cat sat on a mat", "the cat is on the mat"]),
         ("hello world", ["hello there world"]), ("x y z", ["a b c"])]
for hyp, refs in pairs:
    print(round(unigram_f1(hyp, refs), 4))
'''
ONE_SPACE = F1_GOLDEN.replace("hypothesis.split()", 'hypothesis.split(" ")').replace("ref.split()", 'ref.split(" ")')
REGEX = F1_HEAD + '''    import re

    def tokens(text):
        return re.findall(r"\\S+", text)

    scores = []
    for ref in references:
        hyp, gold = Counter(tokens(hypothesis)), Counter(tokens(ref))
        common = sum(min(c, gold[t]) for t, c in hyp.items())
        scores.append(0.0 if common == 0 else 2 * common / (sum(hyp.values()) + sum(gold.values())))
    return max(scores, default=0.0)
'''
TD_HEAD = '''import numpy as np


def td_targets(rewards, values, bootstrap_value, gamma=0.99):
    """One-step TD targets r_t + gamma * V(x_{t+1}), time-major: ``rewards`` and ``values`` are [T, B] (or [T] for
    one environment), ``bootstrap_value`` is V(x_T), [B] (a scalar for [T])."""
'''
TD_GOLDEN = TD_HEAD + '''    next_values = np.concatenate([values[1:], np.asarray(bootstrap_value)[None]], axis=0)
    return rewards + gamma * next_values
'''
TD_DRIVER = '''import numpy as np

from rl.td import td_targets

rng = np.random.default_rng(0)
for _ in range(3):
    print(td_targets(rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=3)).sum())
'''
VSTACK = TD_GOLDEN.replace("np.concatenate([values[1:], np.asarray(bootstrap_value)[None]], axis=0)",
                        "np.vstack([values[1:], np.asarray(bootstrap_value)[None]])")
SHIFTED = TD_HEAD + '''    next_values = np.empty_like(values)
    next_values[:-1] = values[1:]
    next_values[-1] = bootstrap_value
    return rewards + gamma * next_values
'''
KL_HEAD = '''import numpy as np


class KLController:
    def __init__(self, value=0.1, target=0.5, horizon=100):
        self.value, self.target, self.horizon = value, target, horizon

    def update(self, kl, n_steps):
        """Multiply the coefficient by 1 + clip(kl / target - 1, -0.2, 0.2) * n_steps / horizon; return it."""
'''
KL_GOLDEN = KL_HEAD + '''        error = np.clip(kl / self.target - 1.0, -0.2, 0.2)
        self.value = float(self.value * (1.0 + error * n_steps / self.horizon))
        return self.value
'''
KL_DRIVER = '''from rl.kl import KLController

controller = KLController()
for step in range(20):
    print(controller.update(0.3 + 0.05 * step, 16))
'''
KL_NO_STEPS = KL_GOLDEN.replace("error * n_steps / self.horizon", "error / self.horizon")
KL_FLOATS = KL_HEAD + '''        error = min(max(kl / self.target - 1.0, -0.2), 0.2)
        self.value = self.value * (1.0 + error * n_steps / self.horizon)
        return self.value
'''

POOL_HEAD = '''import numpy as np


def mean_pool(hidden, mask=None):
    """The mean of ``hidden`` (batch, seq, dim) over each sequence's positions, those where ``mask`` (batch, seq;
    None: all) is True; a sequence with none gives zeros."""
'''
POOL_GOLDEN = POOL_HEAD + '''    if mask is None:
        mask = np.ones(hidden.shape[:2], dtype=bool)
    weights = np.asarray(mask, dtype=hidden.dtype)[..., None]
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
'''
POOL_DRIVER = '''import numpy as np

from encode.pool import mean_pool

rng = np.random.default_rng(0)
for _ in range(3):
    print(mean_pool(rng.normal(size=(4, 6, 3))).sum())
'''
POOL_UNMASKED = POOL_HEAD + '''    return hidden.mean(axis=1)
'''
POOL_LOOPED = POOL_HEAD + '''    out = np.zeros((hidden.shape[0], hidden.shape[2]))
    for b in range(hidden.shape[0]):
        keep = [t for t in range(hidden.shape[1]) if mask is None or mask[b][t]]
        if keep:
            out[b] = np.mean(hidden[b, keep], axis=0)
    return out
'''
SHORT_HEAD = '''import numpy as np


def final_scores(scores, lengths, min_length=0, penalty=1.0):
    """Each finished beam's score divided by its length to the power ``penalty``; a beam shorter than
    ``min_length`` scores -inf."""
'''
SHORT_GOLDEN = SHORT_HEAD + '''    normed = scores / lengths.astype(float) ** penalty
    return np.where(lengths < min_length, -np.inf, normed)
'''
SHORT_DRIVER = '''import numpy as np

from beams.final import final_scores

rng = np.random.default_rng(0)
for _ in range(3):
    print(final_scores(-rng.uniform(1, 9, size=6), rng.integers(1, 9, size=6)).max())
'''
SHORT_IGNORED = SHORT_HEAD + '''    return scores / lengths.astype(float) ** penalty
'''
SHORT_LOOP = SHORT_HEAD + '''    import math

    return np.array([-math.inf if n < min_length else s / float(n) ** penalty for s, n in zip(scores, lengths)])
'''
TASKS = {
    "entropy": ("decoding/entropy.py::entropy_filter",
                {"decoding/__init__.py": "", "decoding/entropy.py": ENTROPY_GOLDEN, "run.py": ENTROPY_DRIVER},
                "decoding/entropy.py"),
    "f1": ("metrics/f1.py::unigram_f1", {"metrics/__init__.py": "", "metrics/f1.py": F1_GOLDEN, "run.py": F1_DRIVER},
           "metrics/f1.py"),
    "td": ("rl/td.py::td_targets", {"rl/__init__.py": "", "rl/td.py": TD_GOLDEN, "run.py": TD_DRIVER}, "rl/td.py"),
    "pool": ("encode/pool.py::mean_pool",
             {"encode/__init__.py": "", "encode/pool.py": POOL_GOLDEN, "run.py": POOL_DRIVER}, "encode/pool.py"),
    "short": ("beams/final.py::final_scores",
              {"beams/__init__.py": "", "beams/final.py": SHORT_GOLDEN, "run.py": SHORT_DRIVER}, "beams/final.py"),
    "kl": ("rl/kl.py::KLController.update", {"rl/__init__.py": "", "rl/kl.py": KL_GOLDEN, "run.py": KL_DRIVER},
           "rl/kl.py"),
}
CANDIDATES = [
    ("entropy", "entropy not guarded against banned tokens (np.sum)", UNGUARDED, TestStatus.FAILED),
    ("entropy", "filter_value pinned to -inf", PINNED, TestStatus.FAILED),
    ("entropy", "terms masked where the probability is 0, then assigned", MASKED, TestStatus.PASSED),
    ("entropy", "row by row in plain floats", ROWS, TestStatus.PASSED),
    ("f1", "split on one space", ONE_SPACE, TestStatus.FAILED),
    ("f1", "runs of non-space characters by a regular expression", REGEX, TestStatus.PASSED),
    ("td", "next values stacked with np.vstack (batched form only)", VSTACK, TestStatus.FAILED),
    ("td", "next values written into an empty array", SHIFTED, TestStatus.PASSED),
    ("pool", "the mask, of the leading axes, never passed: ignored", POOL_UNMASKED, TestStatus.FAILED),
    ("pool", "position by position", POOL_LOOPED, TestStatus.PASSED),
    ("short", "min_length ignored (the -inf the body writes is in its domain)", SHORT_IGNORED, TestStatus.FAILED),
    ("short", "a list comprehension with math.inf", SHORT_LOOP, TestStatus.PASSED),
    ("kl", "n_steps ignored", KL_NO_STEPS, TestStatus.FAILED),
    ("kl", "plain floats (a horizon of 0 raises, where numpy gives inf)", KL_FLOATS, TestStatus.PASSED),
]

recorded, test_a_form_the_driver_never_gives_tells_right_from_wrong = graded_both_ways(TASKS, CANDIDATES)
