"""Methods and the instance they change. A method called once per step whose first steps change nothing (a
sparsity schedule at zero until it ramps up): the recorder saves the first calls that change the instance, so the
cases, and the search that varies them, see a step that prunes, and a step that starts from a pruned state. A
setting that sizes the instance's arrays in ``__init__`` (``n_bins`` of ``np.zeros(n_bins)``) is never varied
alone: that would give an instance no constructor makes, on which a correct answer that reads the size from the
arrays fails. Tested both ways: the wrong answers fail, correct answers in other styles pass."""

from __future__ import annotations

from helpers.record_fixture import graded_both_ways
from lmrbench.schemas.testrun import TestStatus

HEAD = '''import numpy as np


class LinearPruner:
    """Magnitude pruning on a linear schedule: at steps ``begin, begin + every, ...`` up to ``end``, the target
    sparsity is ``final * (step - begin) / (end - begin)``. ``self.weights`` maps names to the model's arrays,
    zeroed in place; ``self.masks`` their boolean masks (True where kept). Settings in ``self.cfg``: ``begin``,
    ``end``, ``every``, ``final`` and ``with_bias`` (prune 1-D arrays too)."""

    def __init__(self, cfg, weights):
        self.cfg = cfg
        self.weights = weights
        self.masks = {k: np.ones(w.shape, dtype=bool) for k, w in weights.items()}

    def step(self, step):
        """Prune each array (1-D ones only when ``with_bias``) to the target sparsity at a pruning step: the
        ``floor(target * size)`` smallest magnitudes lose their mask (pruned entries count as smallest), and the
        array is multiplied by its mask in place. Returns the target, or None at other steps."""
'''
GOLDEN = HEAD + '''        c = self.cfg
        if step < c.begin or step > c.end or (step - c.begin) % c.every:
            return None
        target = c.final * (step - c.begin) / (c.end - c.begin)
        for name, w in self.weights.items():
            if w.ndim < 2 and not c.with_bias:
                continue
            mask = self.masks[name]
            scores = np.where(mask, np.abs(w), -1.0).ravel()
            n = int(np.floor(target * scores.size))
            order = np.argsort(scores, kind="stable")
            mask.ravel()[order[:n]] = False
            w *= mask
        return target
'''
DRIVER = '''from types import SimpleNamespace

import numpy as np

from prune.linear import LinearPruner

rng = np.random.default_rng(0)
weights = {"w": rng.normal(size=(6, 5)), "b": rng.normal(size=5)}
pruner = LinearPruner(SimpleNamespace(begin=20, end=60, every=10, final=0.8, with_bias=False), weights)
for step in range(70):
    for w in weights.values():
        w += 0.01 * rng.normal(size=w.shape) * (w != 0)
    pruner.step(step)
print(sum(int((w == 0).sum()) for w in weights.values()))
'''
BIAS_IGNORED = GOLDEN.replace("            if w.ndim < 2 and not c.with_bias:\n", "            if w.ndim < 2:\n")
SURVIVORS = GOLDEN.replace("n = int(np.floor(target * scores.size))", "n = int(np.floor(target * mask.sum()))")
LOOPED = HEAD + '''        import math

        cfg = self.cfg
        if not cfg.begin <= step <= cfg.end or (step - cfg.begin) % cfg.every != 0:
            return None
        target = cfg.final * (step - cfg.begin) / (cfg.end - cfg.begin)
        for name in self.weights:
            w, mask = self.weights[name], self.masks[name]
            if w.ndim == 1 and not cfg.with_bias:
                continue
            flat_w, flat_m = w.reshape(-1), mask.reshape(-1)
            ranked = sorted(range(flat_w.size), key=lambda i: (abs(flat_w[i]) if flat_m[i] else -1.0, i))
            for i in ranked[:math.floor(target * flat_w.size)]:
                flat_m[i] = False
            np.multiply(w, mask, out=w)
        return target
'''
PARTITIONED = HEAD + '''        c = self.cfg
        if step < c.begin or step > c.end or (step - c.begin) % c.every != 0:
            return None
        target = c.final * (step - c.begin) / (c.end - c.begin)
        for name, w in self.weights.items():
            if w.ndim >= 2 or c.with_bias:
                m = self.masks[name]
                k = int(target * w.size // 1)
                if k:
                    s = np.where(m, np.abs(w), -1.0).reshape(-1)
                    m.reshape(-1)[np.lexsort((np.arange(s.size), s))[:k]] = False
                w[~m] = 0.0
        return target
'''
TASKS = {"prune": ("prune/linear.py::LinearPruner.step",
                   {"prune/__init__.py": "", "prune/linear.py": GOLDEN, "run.py": DRIVER}, "prune/linear.py")}
CANDIDATES = [
    ("prune", "with_bias ignored", BIAS_IGNORED, TestStatus.FAILED),
    ("prune", "the count taken over the surviving weights", SURVIVORS, TestStatus.FAILED),
    ("prune", "sorted in plain Python, np.multiply(out=)", LOOPED, TestStatus.PASSED),
    ("prune", "lexsort, masked entries set to zero", PARTITIONED, TestStatus.PASSED),
]


HIST_HEAD = '''import numpy as np


class Histogram:
    """Counts of values in [0, 1) over ``n_bins`` equal bins."""

    def __init__(self, n_bins):
        self.n_bins = n_bins
        self.counts = np.zeros(n_bins)

    def add(self, values):
        """Count ``values`` (floats in [0, 1]; 1 falls in the last bin) into ``self.counts``, in place; returns
        the bins they fell in."""
'''
HIST_GOLDEN = HIST_HEAD + '''        idx = np.minimum((np.asarray(values) * self.n_bins).astype(int), self.n_bins - 1)
        np.add.at(self.counts, idx, 1)
        return idx
'''
HIST_DRIVER = '''import numpy as np

from stats.hist import Histogram

h = Histogram(10)
rng = np.random.default_rng(0)
for _ in range(4):
    h.add(rng.uniform(size=16))
print(h.counts)
'''
HIST_SHIFTED = HIST_GOLDEN.replace("* self.n_bins).astype(int)", "* (self.n_bins - 1)).astype(int)")
HIST_BY_LENGTH = HIST_HEAD + '''        k = len(self.counts)
        bins = np.clip(np.floor(np.asarray(values) * k), 0, k - 1).astype(int)
        for b in bins:
            self.counts[b] += 1
        return bins
'''
TASKS["hist"] = ("stats/hist.py::Histogram.add",
                 {"stats/__init__.py": "", "stats/hist.py": HIST_GOLDEN, "run.py": HIST_DRIVER}, "stats/hist.py")
CANDIDATES += [
    ("hist", "bins scaled by n_bins - 1", HIST_SHIFTED, TestStatus.FAILED),
    # n_bins sizes the counts in __init__: no case varies it alone, which would give counts of another length
    ("hist", "the bin count read from the counts' length", HIST_BY_LENGTH, TestStatus.PASSED),
]

recorded, test_calls_from_the_whole_run_and_a_consistent_instance = graded_both_ways(TASKS, CANDIDATES)
