"""Inputs a driver never gives, which the recorded tests try on their own: a head count other than the one every
call ties to the arrays' shapes, a shape tuple one axis longer, a padding mask of bools the driver never passes
(with ignore-index targets where it pads), collapsed embeddings whose distances round below zero, a batch that
mixes timesteps the driver gives one at a time (a zero among them), samples with one more axis where the body
reads their rank, large logits where the body is written to stay finite, a class with no samples, a size read
through a local alias tried at its off switch and its edge, a nan and an inf where the body checks for them, a
count of crops cut together with the rows it splits; and no count changed without them. Each is tested both ways:
the plausible wrong answer it exposes fails, a correct answer in another style passes."""

from __future__ import annotations

from helpers.record_fixture import graded_both_ways
from lmrbench.schemas.testrun import TestStatus

HEADS = '''
    import numpy as np


    def head_bias(scores, n_heads, max_bias=8.0):
        """Add -slope_h * |i - j| to head h of ``scores`` (batch, n_heads, q, k), slope_h = 2 ** (-max_bias * (h + 1)
        / n_heads)."""
        slopes = 2.0 ** (-max_bias * np.arange(1, n_heads + 1) / n_heads)
        q, k = scores.shape[-2:]
        distance = np.abs(np.arange(q)[:, None] - np.arange(k)[None, :])
        return scores - slopes[:, None, None] * distance
'''
HEADS_DRIVER = '''
    import numpy as np

    from model.heads import head_bias

    rng = np.random.default_rng(0)
    for _ in range(3):
        print(head_bias(rng.normal(size=(2, 4, 5, 5)), 4).sum())
'''
HEADS_PINNED = '''import numpy as np


def head_bias(scores, n_heads, max_bias=8.0):
    slopes = 2.0 ** (-max_bias * np.arange(1, 5) / 4)
    q, k = scores.shape[-2:]
    distance = np.abs(np.arange(q)[:, None] - np.arange(k)[None, :])
    return scores - slopes[:, None, None] * distance
'''
HEADS_LOOP = '''import numpy as np


def head_bias(scores, n_heads, max_bias=8.0):
    out = scores.copy()
    for h in range(n_heads):
        slope = 2.0 ** (-max_bias * (h + 1) / n_heads)
        for i in range(scores.shape[-2]):
            for j in range(scores.shape[-1]):
                out[:, h, i, j] -= slope * abs(i - j)
    return out
'''

NORM_HEAD = '''import numpy as np


class Norm:
    def __init__(self, normalized_shape, eps=1e-5):
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.weight = np.ones(self.normalized_shape)

    def forward(self, x):
'''
NORM = NORM_HEAD + '''        """Normalise ``x`` over its trailing axes of shape ``normalized_shape``, all of them
        together; scale by ``weight``."""
        axes = tuple(range(x.ndim - len(self.normalized_shape), x.ndim))
        centred = x - x.mean(axis=axes, keepdims=True)
        return centred / np.sqrt((centred ** 2).mean(axis=axes, keepdims=True) + self.eps) * self.weight
'''
NORM_DRIVER = '''
    import numpy as np

    from model.norm import Norm

    rng = np.random.default_rng(0)
    norm = Norm((6,))
    norm.weight = 1.0 + 0.1 * rng.normal(size=6)
    for _ in range(2):
        print(norm.forward(3.0 + rng.normal(size=(2, 4, 6))).sum())
'''
NORM_LAST_AXIS = NORM_HEAD + '''        centred = x - x.mean(axis=-1, keepdims=True)
        return centred / np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + self.eps) * self.weight
'''
NORM_ROWS = NORM_HEAD + '''        size = int(np.prod(self.normalized_shape))
        rows = x.reshape(-1, size)
        mu = rows.mean(axis=1, keepdims=True)
        var = rows.var(axis=1, keepdims=True)
        return ((rows - mu) / np.sqrt(var + self.eps)).reshape(x.shape) * self.weight
'''

NLL = '''
    import numpy as np


    def masked_nll(logp, target, pad_mask=None):
        """Mean negative log-likelihood of ``target`` under ``logp`` (n, classes) over the positions ``pad_mask``
        (bools, True at padding; None: no padding) keeps; padded targets may hold any integer and are not read;
        0.0 when everything is padding."""
        keep = np.ones(target.shape, dtype=bool) if pad_mask is None else ~pad_mask
        safe = np.where(keep, target, 0)
        nll = -np.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
        count = keep.sum()
        if count == 0:
            return 0.0
        return float(nll[keep].sum() / count)
'''
NLL_DRIVER = '''
    import numpy as np

    from model.nll import masked_nll

    rng = np.random.default_rng(0)
    for _ in range(3):
        logits = rng.normal(size=(8, 3))
        logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        print(masked_nll(logp, rng.integers(0, 3, size=8)))
'''
NLL_SIG = '''import numpy as np


def masked_nll(logp, target, pad_mask=None):
'''
NLL_GATHERS_PADDING = NLL_SIG + '''    keep = np.ones(target.shape, dtype=bool) if pad_mask is None else ~pad_mask
    nll = -np.take_along_axis(logp, target[:, None], axis=1)[:, 0]
    if keep.sum() == 0:
        return 0.0
    return float(nll[keep].mean())
'''
NLL_IGNORES_MASK = NLL_SIG + '''    nll = -np.take_along_axis(logp, target[:, None], axis=1)[:, 0]
    return float(nll.mean())
'''
NLL_WEIGHTS = NLL_SIG + '''    w = np.ones(len(target)) if pad_mask is None else (~pad_mask).astype(float)
    if w.sum() == 0:
        return 0.0
    picked = logp[np.arange(len(target)), np.where(w > 0, target, 0)]
    return float(-(w * picked).sum() / w.sum())
'''

DIST = '''
    import numpy as np


    def nearest_other(x):
        """Distance from each row of ``x`` to its nearest other row, from the Gram matrix (|a|^2 - 2 a.b + |b|^2
        clamped at 0 before the square root)."""
        gram = x @ x.T
        sq = np.diag(gram)[:, None] - 2.0 * gram + np.diag(gram)[None, :]
        dist = np.sqrt(np.maximum(sq, 0.0))
        np.fill_diagonal(dist, np.inf)
        return dist.min(axis=1)
'''
DIST_DRIVER = '''
    import numpy as np

    from model.dist import nearest_other

    rng = np.random.default_rng(0)
    for _ in range(3):
        print(nearest_other(rng.normal(size=(6, 3))).sum())
'''
DIST_SIG = '''import numpy as np


def nearest_other(x):
'''
DIST_UNCLAMPED = DIST_SIG + '''    gram = x @ x.T
    sq = np.diag(gram)[:, None] - 2.0 * gram + np.diag(gram)[None, :]
    dist = np.sqrt(sq)
    np.fill_diagonal(dist, np.inf)
    return dist.min(axis=1)
'''
DIST_DIFFERENCES = DIST_SIG + '''    diff = x[:, None, :] - x[None, :, :]
    dist = np.sqrt((diff ** 2).sum(axis=-1))
    dist[np.arange(len(x)), np.arange(len(x))] = np.inf
    return np.min(dist, axis=1)
'''

STEP = '''
    import numpy as np


    def reverse_step(x, t, eps, noise, abar, var_type="small"):
        """One reverse diffusion step of ``x`` (batch, any trailing axes) at each sample's own timestep ``t``
        (ints, which may differ within the batch): the predicted clean sample scaled to t - 1, plus noise of
        variance ``1 - abar[t - 1]`` ("small", 0 at t = 0) or ``1 - abar[t]`` ("large"), except where t is 0."""
        shape = (-1,) + (1,) * (x.ndim - 1)
        a = abar[t].reshape(shape)
        a_prev = np.where(t > 0, abar[np.maximum(t - 1, 0)], 1.0).reshape(shape)
        mean = (x - np.sqrt(1.0 - a) * eps) / np.sqrt(a) * np.sqrt(a_prev)
        var = 1.0 - a_prev if var_type == "small" else 1.0 - a
        return mean + (t > 0).reshape(shape) * np.sqrt(var) * noise
'''
STEP_DRIVER = '''
    import numpy as np

    from model.step import reverse_step

    rng = np.random.default_rng(0)
    abar = np.cumprod(1.0 - np.linspace(1e-3, 0.2, 40))
    x = rng.normal(size=(16, 2))
    for step in reversed(range(40)):
        t = np.full(16, step)
        x = reverse_step(x, t, 0.1 * x, rng.normal(size=x.shape), abar)
    print(x.mean())
'''
STEP_SIG = '''import numpy as np


def reverse_step(x, t, eps, noise, abar, var_type="small"):
'''
STEP_BODY = '''    shape = (-1,) + (1,) * (x.ndim - 1)
    a = abar[t].reshape(shape)
    a_prev = np.where(t > 0, abar[np.maximum(t - 1, 0)], 1.0).reshape(shape)
    mean = (x - np.sqrt(1.0 - a) * eps) / np.sqrt(a) * np.sqrt(a_prev)
    var = 1.0 - a_prev if var_type == "small" else 1.0 - a
    return mean + (t > 0).reshape(shape) * np.sqrt(var) * noise
'''
STEP_FIRST_T = STEP_SIG + STEP_BODY.replace("(t > 0).reshape(shape) * np.sqrt", "float(t[0] > 0) * np.sqrt")
STEP_FLAT = STEP_SIG + STEP_BODY.replace("shape = (-1,) + (1,) * (x.ndim - 1)", "shape = (-1, 1)")
STEP_LOOP = STEP_SIG + '''    out = np.empty(x.shape)
    for i, step in enumerate(t.tolist()):
        prev = abar[step - 1] if step > 0 else 1.0
        out[i] = (x[i] - (1.0 - abar[step]) ** 0.5 * eps[i]) / abar[step] ** 0.5 * prev ** 0.5
        if step > 0:
            out[i] += ((1.0 - prev) if var_type == "small" else (1.0 - abar[step])) ** 0.5 * noise[i]
    return out
'''

BCE = '''
    import numpy as np


    def weighted_bce(logits, labels, counts):
        """Binary cross-entropy of ``logits`` (n, C) against one-hot ``labels``, summed over the classes with class
        weights 1 / count (0 for a class with no samples) rescaled to mean 1; mean over the batch; stable for large
        logits."""
        counts = np.asarray(counts, dtype=float)
        w = np.zeros_like(counts)
        seen = counts > 0
        w[seen] = 1.0 / counts[seen]
        w = w * len(w) / w.sum()
        onehot = np.eye(logits.shape[1])[labels]
        bce = np.maximum(logits, 0.0) - logits * onehot + np.log1p(np.exp(-np.abs(logits)))
        return float((bce * w).sum(axis=1).mean())
'''
BCE_DRIVER = '''
    import numpy as np

    from model.bce import weighted_bce

    rng = np.random.default_rng(0)
    for _ in range(3):
        print(weighted_bce(rng.normal(size=(8, 4)), rng.integers(0, 4, size=8), np.array([50, 20, 8, 3])))
'''
BCE_SIG = '''import numpy as np


def weighted_bce(logits, labels, counts):
'''
BCE_LOG_SIGMOID = BCE_SIG + '''    counts = np.asarray(counts, dtype=float)
    w = np.zeros_like(counts)
    w[counts > 0] = 1.0 / counts[counts > 0]
    w = w * len(w) / w.sum()
    y = np.eye(logits.shape[1])[labels]
    p = 1.0 / (1.0 + np.exp(-logits))
    return float((-(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)) * w).sum(axis=1).mean())
'''
BCE_NO_EMPTY_CLASS = BCE_SIG + '''    w = 1.0 / np.asarray(counts, dtype=float)
    w = w * len(w) / w.sum()
    y = np.eye(logits.shape[1])[labels]
    bce = np.logaddexp(0.0, logits) - logits * y
    return float((bce * w).sum(axis=1).mean())
'''
BCE_LOGADDEXP = BCE_SIG + '''    n = np.asarray(counts, dtype=float)
    with np.errstate(divide="ignore"):
        w = np.where(n > 0, 1.0 / n, 0.0)
    w = w / w.mean()
    hit = np.arange(logits.shape[1])[None, :] == np.asarray(labels)[:, None]
    bce = np.where(hit, np.logaddexp(0.0, -logits), np.logaddexp(0.0, logits))
    return float((bce @ w).mean())
'''

BLOCK = '''
    import numpy as np


    def block_repeats(tokens, lprobs, size=3):
        """-inf for each next token that would repeat an n-gram (n = ``size``) the hypothesis holds; n <= 0 blocks
        nothing, n = 1 every token held."""
        n = size
        out = np.array(lprobs, dtype=float)
        if n <= 0:
            return out
        for beam, row in enumerate(np.asarray(tokens).tolist()):
            step = len(row)
            seen = {}
            for i in range(step - n + 1):
                seen.setdefault(tuple(row[i:i + n - 1]), set()).add(row[i + n - 1])
            out[beam, sorted(seen.get(tuple(row[step - n + 1:]), ()))] = -np.inf
        return out
'''
BLOCK_DRIVER = '''
    import numpy as np

    from model.block import block_repeats

    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 4, size=(3, 2))
    for _ in range(6):
        lprobs = np.log(rng.dirichlet(np.ones(4), size=3))
        out = block_repeats(tokens, lprobs)
        tokens = np.concatenate([tokens, np.argmax(out, axis=1)[:, None]], axis=1)
    print(tokens)
'''
BLOCK_SIG = '''import numpy as np


def block_repeats(tokens, lprobs, size=3):
'''
BLOCK_NO_SWITCH = BLOCK_SIG + '''    out = np.array(lprobs, dtype=float)
    for beam, row in enumerate(np.asarray(tokens).tolist()):
        seen = {}
        for i in range(len(row) - size + 1):
            seen.setdefault(tuple(row[i:i + size - 1]), set()).add(row[i + size - 1])
        out[beam, sorted(seen.get(tuple(row[len(row) - size + 1:]), ()))] = -np.inf
    return out
'''
BLOCK_NEGATIVE_SUFFIX = BLOCK_SIG + '''    out = np.array(lprobs, dtype=float)
    if size <= 0:
        return out
    for beam, row in enumerate(np.asarray(tokens).tolist()):
        seen = {}
        for i in range(len(row) - size + 1):
            seen.setdefault(tuple(row[i:i + size - 1]), set()).add(row[i + size - 1])
        out[beam, sorted(seen.get(tuple(row[-(size - 1):]), ()))] = -np.inf
    return out
'''
BLOCK_WINDOWS = BLOCK_SIG + '''    out = np.asarray(lprobs, dtype=float).copy()
    toks = np.asarray(tokens)
    if size < 1 or toks.shape[1] < size:
        return out
    for b in range(toks.shape[0]):
        row = toks[b]
        tail = row[len(row) - size + 1:]
        for i in range(len(row) - size + 1):
            if np.array_equal(row[i:i + size - 1], tail):
                out[b, row[i + size - 1]] = -np.inf
    return out
'''

CROPS = '''
    import numpy as np


    class CropLoss:
        def __init__(self, ncrops):
            self.ncrops = ncrops

        def __call__(self, student, teacher):
            """Mean squared distance of each of the ``ncrops`` crops of ``student`` (ncrops * B, D; crop-major rows)
            to ``teacher`` (B, D), averaged over the crops."""
            batch = teacher.shape[0]
            total = 0.0
            for v in range(self.ncrops):
                total += np.mean((student[v * batch:(v + 1) * batch] - teacher) ** 2)
            return float(total / self.ncrops)
'''
CROPS_DRIVER = '''
    import numpy as np

    from model.crops import CropLoss

    rng = np.random.default_rng(0)
    loss = CropLoss(4)
    for _ in range(3):
        print(loss(rng.normal(size=(20, 3)), rng.normal(size=(5, 3))))
'''
CROPS_HEAD = '''import numpy as np


class CropLoss:
    def __init__(self, ncrops):
        self.ncrops = ncrops

    def __call__(self, student, teacher):
'''
CROPS_PINNED = CROPS_HEAD + '''        batch = teacher.shape[0]
        return float(np.mean([np.mean((student[v * batch:(v + 1) * batch] - teacher) ** 2) for v in range(4)]))
'''
CROPS_SPLIT = CROPS_HEAD + '''        crops = np.stack(np.split(student, self.ncrops))
        return float(((crops - teacher[None]) ** 2).mean())
'''

FINITE = '''
    import numpy as np


    def finite_mean(x):
        """Mean of the finite entries of ``x`` (nan and inf left out); 0.0 when none is finite."""
        keep = np.isfinite(x)
        if not keep.any():
            return 0.0
        return float(x[keep].mean())
'''
FINITE_DRIVER = '''
    import numpy as np

    from model.finite import finite_mean

    rng = np.random.default_rng(0)
    for _ in range(3):
        print(finite_mean(rng.normal(size=(4, 3))))
'''
FINITE_SIG = '''import numpy as np


def finite_mean(x):
'''
FINITE_NAN_ONLY = FINITE_SIG + '''    kept = x[~np.isnan(x)]
    return float(kept.mean()) if kept.size else 0.0
'''
FINITE_MASKED = FINITE_SIG + '''    masked = np.ma.masked_invalid(x)
    return 0.0 if masked.count() == 0 else float(masked.mean())
'''

TASKS = {
    "heads": ("model/heads.py::head_bias", {"model/heads.py": HEADS, "run.py": HEADS_DRIVER}, "model/heads.py"),
    "norm": ("model/norm.py::Norm.forward", {"model/norm.py": NORM, "run.py": NORM_DRIVER}, "model/norm.py"),
    "nll": ("model/nll.py::masked_nll", {"model/nll.py": NLL, "run.py": NLL_DRIVER}, "model/nll.py"),
    "dist": ("model/dist.py::nearest_other", {"model/dist.py": DIST, "run.py": DIST_DRIVER}, "model/dist.py"),
    "step": ("model/step.py::reverse_step", {"model/step.py": STEP, "run.py": STEP_DRIVER}, "model/step.py"),
    "bce": ("model/bce.py::weighted_bce", {"model/bce.py": BCE, "run.py": BCE_DRIVER}, "model/bce.py"),
    "block": ("model/block.py::block_repeats", {"model/block.py": BLOCK, "run.py": BLOCK_DRIVER}, "model/block.py"),
    "crops": ("model/crops.py::CropLoss.__call__", {"model/crops.py": CROPS, "run.py": CROPS_DRIVER}, "model/crops.py"),
    "finite": ("model/finite.py::finite_mean", {"model/finite.py": FINITE, "run.py": FINITE_DRIVER},
               "model/finite.py"),
}
CANDIDATES = [
    ("heads", "a head count pinned to the driver's", HEADS_PINNED, TestStatus.FAILED),
    ("heads", "a loop over heads and positions", HEADS_LOOP, TestStatus.PASSED),
    ("norm", "the last axis only", NORM_LAST_AXIS, TestStatus.FAILED),
    ("norm", "flattened rows", NORM_ROWS, TestStatus.PASSED),
    ("nll", "padded targets gathered", NLL_GATHERS_PADDING, TestStatus.FAILED),
    ("nll", "the padding mask ignored", NLL_IGNORES_MASK, TestStatus.FAILED),
    ("nll", "a float weight per position", NLL_WEIGHTS, TestStatus.PASSED),
    ("dist", "the clamp at zero dropped", DIST_UNCLAMPED, TestStatus.FAILED),
    ("dist", "explicit differences", DIST_DIFFERENCES, TestStatus.PASSED),
    ("step", "noise gated on the first sample's timestep", STEP_FIRST_T, TestStatus.FAILED),
    ("step", "a schedule shaped for flat samples only", STEP_FLAT, TestStatus.FAILED),
    ("step", "sample by sample", STEP_LOOP, TestStatus.PASSED),
    ("bce", "the log of the sigmoid", BCE_LOG_SIGMOID, TestStatus.FAILED),
    ("bce", "no weight 0 for a class without samples", BCE_NO_EMPTY_CLASS, TestStatus.FAILED),
    ("bce", "logaddexp both ways", BCE_LOGADDEXP, TestStatus.PASSED),
    ("block", "no off switch for a size of 0", BLOCK_NO_SWITCH, TestStatus.FAILED),
    ("block", "the suffix by a negative index (all of it at size 1)", BLOCK_NEGATIVE_SUFFIX, TestStatus.FAILED),
    ("block", "windows compared one by one", BLOCK_WINDOWS, TestStatus.PASSED),
    ("crops", "four crops pinned", CROPS_PINNED, TestStatus.FAILED),
    ("crops", "the rows split by the crop count", CROPS_SPLIT, TestStatus.PASSED),
    ("finite", "only nan left out", FINITE_NAN_ONLY, TestStatus.FAILED),
    ("finite", "a masked array", FINITE_MASKED, TestStatus.PASSED),
]

recorded, test_an_input_the_driver_never_gives_tells_right_from_wrong = graded_both_ways(TASKS, CANDIDATES)
