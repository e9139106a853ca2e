"""Inputs at the edge of the data that a driver never reaches, found by the search for the mutant that needs them:
a ring's pointer at the end of its axis (a batch written part way round, which a driver whose sizes divide each
other never writes), float arrays with entries exactly zero (the sign of zero, which random gradients never make),
a list of gradients with one left out (None), where the body skips such items, and a setting exactly at the
bound its check names (``eps`` of 0.5 against ``< 0.5``: exact in any program, so no knife edge), where the golden
code raises; and what a body must refuse or take (an id of -1 or at the table's length, one argument an item
shorter than the other, no item at all), where the golden code raises by its own ``raise`` or returns early; and
float inputs negated (a cosine near -1, where an angular margin falls back, that a trained model's never is), and
a count of zero among the positive counts an instance holds, where the body guards them.
Each is tested both ways: the wrong answer it exposes fails, correct answers in other styles pass."""

from __future__ import annotations

from helpers.record_fixture import graded_both_ways
from lmrbench.schemas.testrun import TestStatus

RING_HEAD = '''import numpy as np


class Ring:
    """The last ``len(self.data)`` rows written, the oldest overwritten first, from row ``self.pos`` on."""

    def __init__(self, size, dim):
        self.data = np.zeros((size, dim))
        self.pos = 0

    def add(self, rows):
        """Write ``rows`` (n, dim), n at most the ring's size, at rows ``pos, pos + 1, ...`` modulo the size
        (wrapping round to row 0); ``self.pos`` moves on by n, modulo the size. Returns the rows written to."""
'''
RING_GOLDEN = RING_HEAD + '''        idx = (self.pos + np.arange(len(rows))) % len(self.data)
        self.data[idx] = rows
        self.pos = int((self.pos + len(rows)) % len(self.data))
        return idx
'''
RING_DRIVER = '''import numpy as np

from store.ring import Ring

ring = Ring(12, 3)
rng = np.random.default_rng(0)
for _ in range(6):
    print(ring.add(rng.normal(size=(4, 3))))
'''
RING_SLICED = RING_HEAD + '''        n = len(rows)
        self.data[self.pos:self.pos + n] = rows
        idx = np.arange(self.pos, self.pos + n)
        self.pos = (self.pos + n) % len(self.data)
        return idx
'''
RING_RESTART = RING_HEAD + '''        n = len(rows)
        if self.pos + n > len(self.data):
            self.pos = 0
        idx = np.arange(self.pos, self.pos + n)
        self.data[idx] = rows
        self.pos = (self.pos + n) % len(self.data)
        return idx
'''
RING_SPLIT = RING_HEAD + '''        size, n = len(self.data), len(rows)
        first = min(n, size - self.pos)
        self.data[self.pos:self.pos + first] = rows[:first]
        self.data[:n - first] = rows[first:]
        idx = np.concatenate([np.arange(self.pos, self.pos + first), np.arange(n - first)])
        self.pos = (self.pos + n) % size
        return idx
'''
RING_LOOP = RING_HEAD + '''        written = []
        for row in rows:
            self.data[self.pos] = row
            written.append(self.pos)
            self.pos = (self.pos + 1) % self.data.shape[0]
        return np.array(written)
'''
SIGN_HEAD = '''import numpy as np


class Signum:
    """signSGD with momentum over a list of numpy parameters, which ``step`` updates in place."""

    def __init__(self, params, lr=0.01, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.bufs = [np.zeros_like(p) for p in self.params]

    def step(self, grads):
        """One update: each buffer becomes ``momentum * buf + (1 - momentum) * grad``, in place, and its parameter
        moves by ``-lr * sign(buf)``; the sign of zero is zero (an entry that never had a gradient stays). A
        parameter whose gradient is None is skipped."""
'''
SIGN_GOLDEN = SIGN_HEAD + '''        for p, g, buf in zip(self.params, grads, self.bufs):
            if g is None:
                continue
            buf *= self.momentum
            buf += (1.0 - self.momentum) * g
            p -= self.lr * np.sign(buf)
'''
SIGN_DRIVER = '''import numpy as np

from optim.signum import Signum

rng = np.random.default_rng(0)
params = [rng.normal(size=(3, 4)), rng.normal(size=4)]
opt = Signum(params)
for _ in range(3):
    opt.step([rng.normal(size=p.shape) for p in params])
print(params[1])
'''
SIGN_NEGATIVE_AT_ZERO = SIGN_GOLDEN.replace("np.sign(buf)", "np.where(buf > 0, 1.0, -1.0)")
SIGN_NO_SKIP = SIGN_GOLDEN.replace('''            if g is None:
                continue
''', "")
SIGN_COMPARED = SIGN_HEAD + '''        for i, g in enumerate(grads):
            if g is not None:
                buf, p = self.bufs[i], self.params[i]
                np.multiply(buf, self.momentum, out=buf)
                np.add(buf, (1.0 - self.momentum) * g, out=buf)
                p -= self.lr * ((buf > 0).astype(p.dtype) - (buf < 0).astype(p.dtype))
'''
SIGN_FLAT = SIGN_HEAD + '''        import math

        for p, g, buf in zip(self.params, grads, self.bufs):
            if g is None:
                continue
            for j in range(buf.size):
                b = self.momentum * buf.flat[j] + (1.0 - self.momentum) * g.flat[j]
                buf.flat[j] = b
                p.flat[j] -= self.lr * (0.0 if b == 0 else math.copysign(1.0, b))
'''
SMOOTH_HEAD = '''import numpy as np


def smoothed_nll(log_probs, targets, eps=0.1):
    """The label-smoothed negative log-likelihood of ``targets`` under ``log_probs`` (N, C), averaged over the
    rows; ``eps`` must be in [0, 0.5), else ValueError."""
'''
SMOOTH_GOLDEN = SMOOTH_HEAD + '''    if not 0.0 <= eps < 0.5:
        raise ValueError(f"eps must be in [0, 0.5), got {eps}")
    nll = -log_probs[np.arange(len(targets)), targets]
    return float(((1.0 - eps) * nll - eps * log_probs.mean(axis=-1)).mean())
'''
SMOOTH_DRIVER = '''import numpy as np

from losses.smooth import smoothed_nll

rng = np.random.default_rng(0)
for _ in range(3):
    logits = rng.normal(size=(5, 4))
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    print(smoothed_nll(log_probs, rng.integers(0, 4, size=5)))
'''
SMOOTH_HALF = SMOOTH_GOLDEN.replace("0.0 <= eps < 0.5", "0.0 <= eps <= 0.5")
SMOOTH_SPLIT = SMOOTH_HEAD + '''    if eps < 0 or eps >= 0.5:
        raise ValueError("eps out of range")
    rows = [(1 - eps) * -lp[t] - eps * float(np.mean(lp)) for lp, t in zip(log_probs, targets)]
    return float(np.mean(rows))
'''
TABLE_HEAD = '''import numpy as np


class Table:
    """Rows of vectors written by id, with a count of writes per row."""

    def __init__(self, n, dim):
        self.rows = np.zeros((n, dim))
        self.hits = np.zeros(n, dtype=int)

    def write(self, ids, vectors):
        """Write ``vectors`` (k, dim) into rows ``ids`` (k ints); each written row's hit count goes up by one. As
        many vectors as ids, else ValueError; every id in [0, n), else IndexError (checked after the sizes); no id
        changes nothing."""
'''
TABLE_GOLDEN = TABLE_HEAD + '''        ids = np.asarray(ids)
        vectors = np.asarray(vectors, dtype=float)
        if len(ids) != len(vectors):
            raise ValueError(f"{len(ids)} ids but {len(vectors)} vectors")
        if len(ids) == 0:
            return
        if ids.min() < 0 or ids.max() >= len(self.rows):
            raise IndexError("an id past the table")
        self.rows[ids] = vectors
        np.add.at(self.hits, ids, 1)
'''
TABLE_DRIVER = '''import numpy as np

from store.table import Table

table = Table(20, 3)
rng = np.random.default_rng(0)
for _ in range(4):
    table.write(rng.integers(0, 16, size=5), rng.normal(size=(5, 3)))
print(table.hits)
'''
TABLE_UNCHECKED = TABLE_HEAD + '''        for i, v in zip(ids, vectors):
            self.rows[i] = v
            self.hits[i] += 1
'''
TABLE_UNGUARDED = TABLE_GOLDEN.replace('''        if len(ids) == 0:
            return
''', "")
TABLE_PYTHON = TABLE_HEAD + '''        ids = [int(i) for i in np.ravel(ids)]
        if len(ids) != len(vectors):
            raise ValueError("one vector per id")
        if not all(0 <= i < self.rows.shape[0] for i in ids):
            raise IndexError("id out of range")
        for i, v in zip(ids, vectors):
            self.rows[i] = v
            self.hits[i] += 1
'''
ARC_HEAD = '''import math

import numpy as np


def margin_target(cos, m=0.5):
    """The additive angular margin of each target cosine in ``cos`` (N,): cos(theta + m), which decreases in
    theta only up to pi - m; past it (cos at most cos(pi - m)), ``cos - m * sin(m)`` instead."""
'''
ARC_GOLDEN = ARC_HEAD + '''    phi = cos * math.cos(m) - np.sqrt(1.0 - cos ** 2) * math.sin(m)
    return np.where(cos > math.cos(math.pi - m), phi, cos - m * math.sin(m))
'''
ARC_DRIVER = '''import numpy as np

from heads.arc import margin_target

rng = np.random.default_rng(0)
for _ in range(3):
    print(margin_target(rng.uniform(0.2, 1.0, size=8)).mean())
'''
ARC_NO_FALLBACK = ARC_HEAD + '''    return np.cos(np.arccos(cos) + m)
'''
ARC_ANGLES = ARC_HEAD + '''    out = []
    for c in np.asarray(cos, dtype=float):
        theta = math.acos(c)
        out.append(math.cos(theta + m) if theta + m < math.pi else c - m * math.sin(m))
    return np.array(out)
'''
COUNTS_HEAD = '''import numpy as np


class Reweighter:
    """Weights of classes by the training counts it holds (``self.counts``, ints)."""

    def __init__(self, counts, power=0.5):
        self.counts = np.asarray(counts)
        self.power = power

    def weights(self, targets):
        """Each target's weight: its class count to the power ``-power``, a count of zero taken as one; the weights
        of the classes scaled to average 1."""
'''
COUNTS_GOLDEN = COUNTS_HEAD + '''        n = np.maximum(self.counts.astype(np.float64), 1.0)
        w = n ** -self.power
        w = w / w.mean()
        return w[np.asarray(targets)]
'''
COUNTS_DRIVER = '''import numpy as np

from data.reweight import Reweighter

rng = np.random.default_rng(0)
rw = Reweighter([40, 12, 5, 3])
for _ in range(3):
    print(rw.weights(rng.integers(0, 4, size=6)).sum())
'''
COUNTS_UNGUARDED = COUNTS_GOLDEN.replace("np.maximum(self.counts.astype(np.float64), 1.0)",
                                        "self.counts.astype(np.float64)")
COUNTS_CLIPPED = COUNTS_HEAD + '''        w = np.power(np.clip(self.counts, 1, None).astype(float), -self.power)
        return (w * (len(w) / w.sum()))[targets]
'''
TASKS = {
    "counts": ("data/reweight.py::Reweighter.weights",
               {"data/__init__.py": "", "data/reweight.py": COUNTS_GOLDEN, "run.py": COUNTS_DRIVER},
               "data/reweight.py"),
    "ring": ("store/ring.py::Ring.add", {"store/__init__.py": "", "store/ring.py": RING_GOLDEN, "run.py": RING_DRIVER},
             "store/ring.py"),
    "sign": ("optim/signum.py::Signum.step",
             {"optim/__init__.py": "", "optim/signum.py": SIGN_GOLDEN, "run.py": SIGN_DRIVER}, "optim/signum.py"),
    "smooth": ("losses/smooth.py::smoothed_nll",
               {"losses/__init__.py": "", "losses/smooth.py": SMOOTH_GOLDEN, "run.py": SMOOTH_DRIVER},
               "losses/smooth.py"),
    "table": ("store/table.py::Table.write",
              {"store/__init__.py": "", "store/table.py": TABLE_GOLDEN, "run.py": TABLE_DRIVER}, "store/table.py"),
    "arc": ("heads/arc.py::margin_target", {"heads/__init__.py": "", "heads/arc.py": ARC_GOLDEN, "run.py": ARC_DRIVER},
            "heads/arc.py"),
}
CANDIDATES = [
    ("counts", "a class count of zero not taken as one", COUNTS_UNGUARDED, TestStatus.FAILED),
    ("counts", "clipped, scaled by the sum", COUNTS_CLIPPED, TestStatus.PASSED),
    ("ring", "written as one slice (not wrapped part way)", RING_SLICED, TestStatus.FAILED),
    ("ring", "a batch that would pass the end restarts at row 0", RING_RESTART, TestStatus.FAILED),
    ("ring", "two slices, the second from row 0", RING_SPLIT, TestStatus.PASSED),
    ("ring", "row by row", RING_LOOP, TestStatus.PASSED),
    ("sign", "the sign of zero taken as -1", SIGN_NEGATIVE_AT_ZERO, TestStatus.FAILED),
    ("sign", "a gradient left out (None) not skipped", SIGN_NO_SKIP, TestStatus.FAILED),
    ("sign", "comparisons for the sign, by index, out= updates", SIGN_COMPARED, TestStatus.PASSED),
    ("sign", "entry by entry with math.copysign", SIGN_FLAT, TestStatus.PASSED),
    ("smooth", "eps of exactly 0.5 accepted", SMOOTH_HALF, TestStatus.FAILED),
    ("smooth", "the bound checked as two comparisons, rows in a list", SMOOTH_SPLIT, TestStatus.PASSED),
    ("table", "no check of ids or sizes (a negative id wraps round, zip stops at the shorter)", TABLE_UNCHECKED,
     TestStatus.FAILED),
    ("table", "no id: ids.min() of an empty array", TABLE_UNGUARDED, TestStatus.FAILED),
    ("table", "checks in plain Python", TABLE_PYTHON, TestStatus.PASSED),
    ("arc", "no fall-back past pi - m (a driver's cosines are all positive)", ARC_NO_FALLBACK, TestStatus.FAILED),
    ("arc", "angles by math.acos, one by one", ARC_ANGLES, TestStatus.PASSED),
]

recorded, test_an_input_at_the_edge_of_the_data_tells_right_from_wrong = graded_both_ways(TASKS, CANDIDATES)
