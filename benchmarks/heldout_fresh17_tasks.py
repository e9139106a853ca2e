"""An eighteenth held-out set for ``wrong_answers.py --set fresh17``: four numpy tasks of shapes that no other set
nor any test fixture has. The first is the label-distribution-aware margin loss of Cao et al. (2019) with its
deferred re-weighting, as a criterion's method reading ``self.cfg.loss.ldam``, ``self.cfg.loss.drw`` and
``self.cfg.loss.reduction``: margins falling as each class's training count to the power 1/4 and scaled so that the
largest is ``max_m``, subtracted from the target logit before the scale ``s``, the counts taken as at least 1, and
from ``start_epoch`` on the inverse effective numbers of Cui et al. as class weights normalised to sum to the
number of classes, with a weighted mean; the driver trains a linear classifier on long-tailed data with the
default config (s 30, max_m 0.5, re-weighting from epoch 16 with beta 0.9999, "mean"), never with another
reduction, no re-weighting, an empty class nor an empty batch. The second is adaptive gradient clipping (Brock et
al. 2021, NFNets), a function over the model's parameter and gradient dicts called once per step: unitwise norms
over every axis but the first (a whole tensor of rank 0 or 1 as one unit), the parameter's norm floored at ``eps``,
gradients of a unit whose norm passes ``clip_factor`` times it rescaled in place, names in ``exclude`` and missing
gradients left alone, and the gradient centralisation of Yong et al. (2020) before clipping; the driver trains a
small MLP with the defaults, never with ``exclude``, centralisation, float32 gradients nor a unit exactly at its
bound. The third is NDCG@k over graded relevance with the tie-averaged DCG of McSherry and Najork (2008): each
group of tied scores given its mean gain over the discounts of the ranks it spans, cut at k, exponential or
linear gains, a mask of the items present, a tie-breaking mode by index, and the score of queries with nothing
relevant (or their exclusion from the mean); the driver evaluates a linear ranker with k = 10, never with ties,
masks, k of None, linear gains nor queries with nothing relevant. The fourth is TD(lambda) with linear function
approximation (Sutton and Barto 2018), called once per environment step and changing ``self.w`` and ``self.z`` in
place: accumulating, replacing and the dutch traces of true online TD(lambda) (van Seijen et al. 2016) with its
``v_old``, bootstrapping cut at termination but not at truncation, and the traces cleared when an episode ends;
the driver evaluates the random policy of the 19-state random walk with accumulating traces, gamma 1, never with
another trace, truncation nor a gamma below 1. Written before its first run, and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

# -- LDAM loss with deferred re-weighting (Cao et al. 2019) -------------------------------------------------------

LD_HEAD = '''class LDAMLoss:
    """The label-distribution-aware margin loss ("Learning Imbalanced Datasets with Label-Distribution-Aware
    Margin Loss") with its deferred re-weighting (DRW): each class's margin falls as its training count to the
    power 1/4, and from ``start_epoch`` on each sample is weighted by the inverse of its class's effective number
    ("Class-Balanced Loss Based on Effective Number of Samples"). ``self.cls_num_list`` holds the training count
    of each class; settings in ``self.cfg.loss``."""

    def __init__(self, cfg, cls_num_list):
        self.cfg = cfg
        self.cls_num_list = np.asarray(cls_num_list)

    def forward(self, logits, targets, epoch):
'''
LD_BODY = '''        c = self.cfg.loss
        if c.reduction not in ("mean", "sum", "none"):
            raise ValueError(f"unknown reduction {c.reduction!r}")
        x = np.asarray(logits, dtype=np.float64)
        y = np.asarray(targets).reshape(-1)
        num_classes = self.cls_num_list.size
        if x.ndim != 2 or x.shape[0] != y.size or x.shape[1] != num_classes:
            raise ValueError(f"logits of shape {x.shape} for {y.size} targets and {num_classes} classes")
        if np.any((y < 0) | (y >= num_classes)):
            raise ValueError("target out of range")
        counts = np.maximum(self.cls_num_list.astype(np.float64), 1.0)
        m_list = 1.0 / np.sqrt(np.sqrt(counts))
        m_list = m_list * (c.ldam.max_m / np.max(m_list))
        rows = np.arange(y.size)
        adjusted = x.copy()
        adjusted[rows, y] -= m_list[y]
        z = c.ldam.s * adjusted
        if y.size:
            top = z.max(axis=1, keepdims=True)
            log_z = top[:, 0] + np.log(np.exp(z - top).sum(axis=1))
            nll = log_z - z[rows, y]
        else:
            nll = np.zeros(0)
        if c.drw.start_epoch is not None and epoch >= c.drw.start_epoch:
            effective_num = 1.0 - np.power(c.drw.beta, counts)
            weights = (1.0 - c.drw.beta) / effective_num
            weights = weights / np.sum(weights) * num_classes
        else:
            weights = np.ones(num_classes)
        w = weights[y]
        if c.reduction == "none":
            return w * nll
        if c.reduction == "sum":
            return float(np.sum(w * nll))
        if y.size == 0:
            return 0.0
        return float(np.sum(w * nll) / np.sum(w))
'''
LD_DOC = '''        """The LDAM loss of a batch, with the class weights of deferred re-weighting from ``start_epoch``.

        ``logits``: a float array (N, C), C the number of classes in ``self.cls_num_list``; ``targets``: ints (N,)
        in [0, C); ``epoch``: the current epoch (an int, from 0). Else ValueError (shapes that do not match, a
        target out of range, a reduction other than "mean", "sum" or "none"). Settings, read from
        ``self.cfg.loss``: ``ldam.max_m``, ``ldam.s``, ``drw.start_epoch`` (None: never re-weight), ``drw.beta``
        and ``reduction``.

        With each count n_j taken as at least 1, the margin of class j is ``n_j ** -0.25``, all of them scaled
        so that the largest is ``max_m``. Each row's target logit is lowered by its class's margin, every logit
        is then multiplied by ``s``, and the per-sample loss is the cross-entropy of those logits with the target
        (the log-sum-exp of the row less its target logit, computed stably).

        When ``start_epoch`` is not None and ``epoch >= start_epoch``, class j's weight is ``(1 - beta) / (1 -
        beta ** n_j)``, all of them scaled to sum to C; otherwise every weight is 1. Each sample takes its target
        class's weight w_i. "none" returns the weighted losses ``w_i * l_i`` (a float64 array (N,)); "sum" their
        sum; "mean" their sum divided by the sum of the w_i (0.0 for an empty batch, as "sum" gives).

        Neither argument nor ``self.cls_num_list`` is changed.
        """
'''
LD_GOLDEN = "\n\n" + LD_HEAD + LD_DOC + LD_BODY
LD_CONFIG = '''"""Experiment configuration."""

from dataclasses import dataclass, field


@dataclass
class LDAMConfig:
    max_m: float = 0.5
    s: float = 30.0


@dataclass
class DRWConfig:
    start_epoch: int | None = 16
    beta: float = 0.9999


@dataclass
class LossConfig:
    ldam: LDAMConfig = field(default_factory=LDAMConfig)
    drw: DRWConfig = field(default_factory=DRWConfig)
    reduction: str = "mean"


@dataclass
class TrainConfig:
    classes: int = 6
    inputs: int = 8
    max_count: int = 400
    imbalance: float = 0.02
    batch_size: int = 64
    epochs: int = 20
    lr: float = 0.002
    loss: LossConfig = field(default_factory=LossConfig)
'''
LD_DRIVER = '''"""Train a linear classifier on long-tailed data with the LDAM loss and deferred re-weighting:
python train_ldam.py"""

import numpy as np

from longtail.config import TrainConfig
from longtail.losses import LDAMLoss


def class_counts(cfg):
    ratios = cfg.imbalance ** (np.arange(cfg.classes) / (cfg.classes - 1))
    return np.maximum((cfg.max_count * ratios).astype(int), 1)


def backward(cfg, counts, logits, labels, epoch):
    """The loss's slope with respect to the logits, written out by hand."""
    margins = counts ** -0.25
    margins = margins * (cfg.loss.ldam.max_m / margins.max())
    rows = np.arange(labels.size)
    z = logits.copy()
    z[rows, labels] -= margins[labels]
    z *= cfg.loss.ldam.s
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[rows, labels] -= 1.0
    if epoch >= cfg.loss.drw.start_epoch:
        weights = (1.0 - cfg.loss.drw.beta) / (1.0 - cfg.loss.drw.beta ** counts)
        weights = weights / weights.sum() * cfg.classes
    else:
        weights = np.ones(cfg.classes)
    w = weights[labels]
    return cfg.loss.ldam.s * p * (w / w.sum())[:, None]


def main():
    rng = np.random.default_rng(0)
    cfg = TrainConfig()
    counts = class_counts(cfg)
    means = 1.2 * rng.normal(size=(cfg.classes, cfg.inputs))
    labels = np.repeat(np.arange(cfg.classes), counts)
    x = means[labels] + rng.normal(size=(labels.size, cfg.inputs))
    test_labels = np.repeat(np.arange(cfg.classes), 100)
    test_x = means[test_labels] + rng.normal(size=(test_labels.size, cfg.inputs))
    weight = 0.01 * rng.normal(size=(cfg.inputs, cfg.classes))
    bias = np.zeros(cfg.classes)
    criterion = LDAMLoss(cfg, counts)
    for epoch in range(cfg.epochs):
        order = rng.permutation(labels.size)
        total, batches = 0.0, 0
        for start in range(0, labels.size, cfg.batch_size):
            idx = order[start:start + cfg.batch_size]
            logits = x[idx] @ weight + bias
            loss = criterion.forward(logits, labels[idx], epoch)
            grad = backward(cfg, counts, logits, labels[idx], epoch)
            weight -= cfg.lr * x[idx].T @ grad
            bias -= cfg.lr * grad.sum(axis=0)
            total += loss
            batches += 1
        predicted = np.argmax(test_x @ weight + bias, axis=1)
        per_class = [float(np.mean(predicted[test_labels == j] == j)) for j in range(cfg.classes)]
        print(f"epoch {epoch}: loss {total / batches:.4f}, balanced accuracy {np.mean(per_class):.3f}, "
              f"rarest class {per_class[-1]:.3f}")


if __name__ == "__main__":
    main()
'''

_ld = editor(LD_HEAD, LD_BODY)
_LD_DRW = '''        if c.drw.start_epoch is not None and epoch >= c.drw.start_epoch:
'''
_LD_DRW_LATE = '''        if c.drw.start_epoch is not None and epoch > c.drw.start_epoch:
'''

LD_WRONG = {
    "pins s": _ld("z = c.ldam.s * adjusted", "z = 30.0 * adjusted"),
    "max_m ignored": _ld("m_list = m_list * (c.ldam.max_m / np.max(m_list))",
                         "m_list = m_list * (0.5 / np.max(m_list))"),
    "margin from the square root of the count": _ld("m_list = 1.0 / np.sqrt(np.sqrt(counts))",
                                                    "m_list = 1.0 / np.sqrt(counts)"),
    "margin added to the target logit": _ld("adjusted[rows, y] -= m_list[y]", "adjusted[rows, y] += m_list[y]"),
    "margin subtracted after the scale": _ld('''        adjusted[rows, y] -= m_list[y]
        z = c.ldam.s * adjusted
''', '''        z = c.ldam.s * adjusted
        z[rows, y] -= m_list[y]
'''),
    "re-weighting from the epoch after start": _ld(_LD_DRW, _LD_DRW_LATE),
    "start_epoch of None compared": _ld(_LD_DRW, '''        if epoch >= c.drw.start_epoch:
'''),
    "weights not normalised": _ld("            weights = weights / np.sum(weights) * num_classes\n", ""),
    "mean over the samples, not the weights": _ld("return float(np.sum(w * nll) / np.sum(w))",
                                                  "return float(np.mean(w * nll))"),
    "empty classes unguarded": _ld("counts = np.maximum(self.cls_num_list.astype(np.float64), 1.0)",
                                   "counts = self.cls_num_list.astype(np.float64)"),
    "reduction ignored": _ld('''        if c.reduction == "none":
            return w * nll
        if c.reduction == "sum":
            return float(np.sum(w * nll))
''', ""),
}
LD_RIGHT = {
    "row by row, math": LD_HEAD + '''        import math

        cfg = self.cfg.loss
        if cfg.reduction not in {"mean", "sum", "none"}:
            raise ValueError("reduction")
        X = np.array(logits, dtype=float)
        Y = [int(t) for t in np.asarray(targets).ravel()]
        C = len(self.cls_num_list)
        if X.ndim != 2 or X.shape != (len(Y), C):
            raise ValueError("shapes")
        if any(t < 0 or t >= C for t in Y):
            raise ValueError("target")
        n = [max(float(v), 1.0) for v in self.cls_num_list]
        raw = [v ** -0.25 for v in n]
        top = max(raw)
        margin = [cfg.ldam.max_m * r / top for r in raw]
        start = cfg.drw.start_epoch
        if start is None or epoch < start:
            cw = [1.0] * C
        else:
            b = cfg.drw.beta
            inv = [(1.0 - b) / (1.0 - b ** v) for v in n]
            total = sum(inv)
            cw = [C * v / total for v in inv]
        losses, weights = [], []
        for i, t in enumerate(Y):
            row = [cfg.ldam.s * (float(X[i, j]) - (margin[j] if j == t else 0.0)) for j in range(C)]
            mx = max(row)
            lse = mx + math.log(sum(math.exp(v - mx) for v in row))
            losses.append(cw[t] * (lse - row[t]))
            weights.append(cw[t])
        if cfg.reduction == "none":
            return np.array(losses, dtype=np.float64)
        if cfg.reduction == "sum":
            return float(sum(losses))
        return float(sum(losses) / sum(weights)) if Y else 0.0
''',
    "one-hot margins, logaddexp": LD_HEAD + '''        lc = self.cfg.loss
        if lc.reduction not in ("mean", "sum", "none"):
            raise ValueError("bad reduction")
        out = np.asarray(logits, dtype=np.float64)
        tgt = np.asarray(targets).ravel()
        k = len(self.cls_num_list)
        if out.ndim != 2 or out.shape[0] != tgt.shape[0] or out.shape[1] != k:
            raise ValueError("shape mismatch")
        if tgt.size and (tgt.min() < 0 or tgt.max() >= k):
            raise ValueError("target out of range")
        n = np.clip(np.asarray(self.cls_num_list, dtype=np.float64), 1.0, None)
        margins = n ** -0.25
        margins *= lc.ldam.max_m / margins.max()
        onehot = np.eye(k)[tgt] if tgt.size else np.zeros((0, k))
        z = lc.ldam.s * (out - onehot * margins[None, :])
        per = np.logaddexp.reduce(z, axis=1) - (onehot * z).sum(axis=1) if tgt.size else np.zeros(0)
        reweight = lc.drw.start_epoch is not None and not epoch < lc.drw.start_epoch
        cls_w = (1.0 - lc.drw.beta) / (1.0 - lc.drw.beta ** n) if reweight else np.ones(k)
        cls_w = cls_w * (k / cls_w.sum())
        w = onehot @ cls_w
        if lc.reduction == "none":
            return w * per
        total = float(np.dot(w, per))
        if lc.reduction == "sum" or tgt.size == 0:
            return total
        return total / float(w.sum())
''',
}


def ld_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general batches: the default config before, at and after ``start_epoch``; another ``s`` and
    ``max_m``; no re-weighting; another beta, and a beta of 0; a class with no training sample; the "sum" and
    "none" reductions; float32 logits; an empty batch under each reduction; an unknown reduction, a target out of
    range and shapes that do not match. Each gives the loss, and the logits, targets and counts as the caller holds
    them afterwards."""
    rng = np.random.default_rng(168)

    def config(max_m=0.5, s=30.0, start_epoch=16, beta=0.9999, reduction="mean"):
        return SimpleNamespace(loss=SimpleNamespace(ldam=SimpleNamespace(max_m=max_m, s=s),
                                                    drw=SimpleNamespace(start_epoch=start_epoch, beta=beta),
                                                    reduction=reduction))

    counts = np.array([500, 120, 40, 9, 3])
    empty_class = np.array([300, 0, 50, 7, 2])
    logits = 0.4 * rng.normal(size=(8, 5))
    targets = np.array([0, 4, 3, 1, 4, 2, 0, 3])
    cases = [
        (config(), counts, logits, targets, 3),
        (config(), counts, logits, targets, 16),
        (config(), counts, logits, targets, 40),
        (config(s=8.0, max_m=0.3), counts, logits, targets, 2),
        (config(s=5.0, max_m=1.2, start_epoch=1), counts, logits, targets, 4),
        (config(start_epoch=None), counts, logits, targets, 100),
        (config(start_epoch=0, beta=0.99), counts, logits, targets, 0),
        (config(start_epoch=0, beta=0.0), counts, logits, targets, 7),
        (config(s=4.0, start_epoch=2), empty_class, logits, targets, 5),
        (config(s=4.0), empty_class, logits, targets, 0),
        (config(s=6.0, reduction="sum"), counts, logits, targets, 1),
        (config(s=6.0, reduction="sum", start_epoch=0, beta=0.99), counts, logits, targets, 1),
        (config(s=6.0, reduction="none", start_epoch=5, beta=0.999), counts, logits, targets, 9),
        (config(s=6.0, reduction="none"), counts, logits, targets, 0),
        (config(s=10.0), counts, logits.astype(np.float32), targets, 30),
        (config(), counts, np.zeros((0, 5)), np.zeros(0, dtype=int), 30),
        (config(reduction="sum"), counts, np.zeros((0, 5)), np.zeros(0, dtype=int), 30),
        (config(reduction="none"), counts, np.zeros((0, 5)), np.zeros(0, dtype=int), 30),
        (config(reduction="max"), counts, logits, targets, 3),
        (config(), counts, logits, np.array([0, 5, 3, 1, 4, 2, 0, 3]), 3),
        (config(), counts, logits[:, :4], targets, 3),
        (config(), counts, logits, targets[:6], 3),
    ]
    calls: list[Callable[[], object]] = []
    for cfg, cls_counts, lg, tg, epoch in cases:

        def call(cfg=cfg, cls_counts=cls_counts, lg=lg, tg=tg, epoch=epoch) -> object:
            held_counts = cls_counts.copy()
            criterion = ns["LDAMLoss"](cfg, held_counts)
            held, held_targets = lg.copy(), tg.copy()
            out = criterion.forward(held, held_targets, epoch)
            return out, held, held_targets, held_counts

        calls.append(call)
    return calls


# -- Adaptive gradient clipping (Brock et al. 2021) with gradient centralisation (Yong et al. 2020) ---------------

AG_SIG = "def adaptive_clip_grads(params, grads, clip_factor=0.01, eps=1e-3, exclude=None, centralize=False):\n"
AG_BODY = '''    if clip_factor <= 0.0:
        raise ValueError(f"clip_factor must be positive, got {clip_factor}")

    def unitwise_norm(a):
        if a.ndim <= 1:
            return np.sqrt(np.sum(a * a))
        return np.sqrt(np.sum(a * a, axis=tuple(range(1, a.ndim)), keepdims=True))

    skipped = set() if exclude is None else set(exclude)
    clipped = 0
    for name, p in params.items():
        g = grads.get(name)
        if g is None or name in skipped:
            continue
        if centralize and g.ndim > 1:
            g -= g.mean(axis=tuple(range(1, g.ndim)), keepdims=True)
        param_norm = unitwise_norm(np.asarray(p, dtype=np.float64))
        grad_norm = unitwise_norm(np.asarray(g, dtype=np.float64))
        max_norm = clip_factor * np.maximum(param_norm, eps)
        over = grad_norm > max_norm
        g *= np.where(over, max_norm / np.maximum(grad_norm, 1e-6), 1.0)
        clipped += int(np.count_nonzero(over))
    return clipped
'''
AG_DOC = '''    """Adaptive gradient clipping ("High-Performance Large-Scale Image Recognition Without Normalization"),
    unit by unit, with the gradient centralisation of "Gradient Centralization: A New Optimization Technique for
    Deep Neural Networks" as an option; called once per step, before the optimiser's.

    ``params``, ``grads``: dicts of float arrays by name; a parameter whose gradient is missing from ``grads`` or
    None, or whose name is in ``exclude`` (None: no name), is left alone. ``clip_factor``: lambda, > 0, else
    ValueError before anything changes; ``eps``: the floor of a parameter's norm.

    A unit of a tensor of rank 2 or more is one slice along its first axis (an output unit), its norm the
    Euclidean norm over every other axis; a tensor of rank 0 or 1 is one unit, its norm that of the whole. With
    ``centralize``, each unit of a gradient of rank 2 or more first has its mean (over those axes) subtracted;
    gradients of rank 0 or 1 are not centralised. Then each unit of the gradient whose norm ||G|| is above
    ``clip_factor * max(||W||, eps)`` (W the parameter's same unit) is multiplied by ``clip_factor * max(||W||,
    eps) / max(||G||, 1e-6)``; the others are left as they are. The norms are taken in float64.

    The gradient arrays of ``grads`` are changed in place (the arrays themselves, keeping their dtype);
    ``params`` is not changed. Returns the number of units clipped, an int.
    """
'''
AG_GOLDEN = "\n\n" + AG_SIG + AG_DOC + AG_BODY
AG_DRIVER = '''"""Train a small normaliser-free MLP with SGD and adaptive gradient clipping: python train_agc.py"""

import numpy as np

from nfnet.agc import adaptive_clip_grads

INPUTS = 10
HIDDEN = 32
CLASSES = 4
BATCH = 128
STEPS = 400
LR = 0.8


def forward(params, x):
    h = np.maximum(x @ params["fc1.weight"].T + params["fc1.bias"], 0.0)
    return h, h @ params["head.weight"].T + params["head.bias"]


def main():
    rng = np.random.default_rng(0)
    centres = 2.0 * rng.normal(size=(CLASSES, INPUTS))
    params = {
        "fc1.weight": rng.normal(size=(HIDDEN, INPUTS)) / np.sqrt(INPUTS),
        "fc1.bias": np.zeros(HIDDEN),
        "head.weight": rng.normal(size=(CLASSES, HIDDEN)) / np.sqrt(HIDDEN),
        "head.bias": np.zeros(CLASSES),
    }
    for step in range(1, STEPS + 1):
        y = rng.integers(0, CLASSES, size=BATCH)
        x = centres[y] + rng.normal(size=(BATCH, INPUTS))
        h, logits = forward(params, x)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        loss = float(-np.mean(np.log(p[np.arange(BATCH), y])))
        d_logits = p.copy()
        d_logits[np.arange(BATCH), y] -= 1.0
        d_logits /= BATCH
        d_h = (d_logits @ params["head.weight"]) * (h > 0)
        grads = {"fc1.weight": d_h.T @ x, "fc1.bias": d_h.sum(axis=0),
                 "head.weight": d_logits.T @ h, "head.bias": d_logits.sum(axis=0)}
        clipped = adaptive_clip_grads(params, grads)
        for name, g in grads.items():
            params[name] -= LR * g
        if step % 50 == 0:
            print(f"step {step}: loss {loss:.4f}, units clipped {clipped}, "
                  f"accuracy {float(np.mean(np.argmax(logits, axis=1) == y)):.3f}")


if __name__ == "__main__":
    main()
'''

_ag = editor(AG_SIG, AG_BODY)
_AG_CENTRE = '''        if centralize and g.ndim > 1:
            g -= g.mean(axis=tuple(range(1, g.ndim)), keepdims=True)
'''
_AG_CLIP = '''        param_norm = unitwise_norm(np.asarray(p, dtype=np.float64))
        grad_norm = unitwise_norm(np.asarray(g, dtype=np.float64))
        max_norm = clip_factor * np.maximum(param_norm, eps)
        over = grad_norm > max_norm
        g *= np.where(over, max_norm / np.maximum(grad_norm, 1e-6), 1.0)
'''

AG_WRONG = {
    "pins clip_factor": _ag("max_norm = clip_factor * np.maximum(param_norm, eps)",
                            "max_norm = 0.01 * np.maximum(param_norm, eps)"),
    "eps ignored": _ag("max_norm = clip_factor * np.maximum(param_norm, eps)", "max_norm = clip_factor * param_norm"),
    "eps added, not a floor": _ag("max_norm = clip_factor * np.maximum(param_norm, eps)",
                                  "max_norm = clip_factor * (param_norm + eps)"),
    "norm over the whole tensor": _ag('''        if a.ndim <= 1:
            return np.sqrt(np.sum(a * a))
        return np.sqrt(np.sum(a * a, axis=tuple(range(1, a.ndim)), keepdims=True))
''', '''        return np.sqrt(np.sum(a * a))
'''),
    "units along the last axis": _ag("return np.sqrt(np.sum(a * a, axis=tuple(range(1, a.ndim)), keepdims=True))",
                                     "return np.sqrt(np.sum(a * a, axis=tuple(range(a.ndim - 1)), keepdims=True))"),
    "exclude ignored": _ag("if g is None or name in skipped:", "if g is None:"),
    "centralize ignored": _ag(_AG_CENTRE, ""),
    "1-D gradients centralised too": _ag(_AG_CENTRE, '''        if centralize:
            g -= g.mean(axis=tuple(range(1, g.ndim)), keepdims=True) if g.ndim > 1 else g.mean()
'''),
    "centralised after clipping": _ag(_AG_CENTRE + _AG_CLIP, _AG_CLIP + _AG_CENTRE),
    "gradients rebound in the dict": _ag('''        if centralize and g.ndim > 1:
            g -= g.mean(axis=tuple(range(1, g.ndim)), keepdims=True)
''', '''        if centralize and g.ndim > 1:
            g = g - g.mean(axis=tuple(range(1, g.ndim)), keepdims=True)
''').replace("        g *= np.where(over, max_norm / np.maximum(grad_norm, 1e-6), 1.0)\n",
             "        grads[name] = g * np.where(over, max_norm / np.maximum(grad_norm, 1e-6), 1.0)\n"),
    "missing gradients not skipped": _ag('''        g = grads.get(name)
        if g is None or name in skipped:
''', '''        if name in skipped:
            continue
        g = grads[name]
        if g is None:
'''),
    "units at the bound counted as clipped": _ag("over = grad_norm > max_norm", "over = grad_norm >= max_norm"),
}
AG_RIGHT = {
    "unit by unit": AG_SIG + '''    import math

    if not clip_factor > 0:
        raise ValueError("clip_factor")
    leave = set(exclude or ())
    count = 0
    for name in params:
        grad = grads.get(name, None)
        if grad is None or name in leave:
            continue
        weight = np.asarray(params[name], dtype=float)
        if grad.ndim <= 1:
            units = [(Ellipsis, weight, grad)]
        else:
            units = [(i, weight[i], grad[i]) for i in range(grad.shape[0])]
        for index, w_unit, g_unit in units:
            if centralize and grad.ndim > 1:
                grad[index] = g_unit - g_unit.mean()
                g_unit = grad[index]
            w_norm = math.sqrt(float(np.sum(np.square(w_unit))))
            g_norm = math.sqrt(float(np.sum(np.square(g_unit.astype(float)))))
            bound = clip_factor * max(w_norm, eps)
            if g_norm > bound:
                grad[index] = g_unit * (bound / max(g_norm, 1e-6))
                count += 1
    return count
''',
    "reshaped to rows, linalg norms": AG_SIG + '''    if clip_factor <= 0:
        raise ValueError("clip_factor must be > 0")
    excluded = frozenset(exclude) if exclude is not None else frozenset()
    total = 0
    for key, weight in params.items():
        if key in excluded or grads.get(key) is None:
            continue
        grad = grads[key]
        rows = grad.shape[0] if grad.ndim > 1 else 1
        g2 = grad.reshape(rows, -1)
        if centralize and grad.ndim > 1:
            np.subtract(g2, g2.mean(axis=1, keepdims=True), out=g2)
        w2 = np.asarray(weight, dtype=np.float64).reshape(rows, -1)
        w_norm = np.linalg.norm(w2, axis=1)
        g_norm = np.linalg.norm(g2.astype(np.float64), axis=1)
        limit = clip_factor * np.fmax(w_norm, eps)
        factor = np.ones(rows)
        hit = g_norm > limit
        factor[hit] = limit[hit] / np.fmax(g_norm[hit], 1e-6)
        g2 *= factor[:, None]
        total += int(hit.sum())
    return total
''',
}


def ag_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a few steps on a small model whose gradients drift between them: the defaults; another
    ``clip_factor`` and ``eps``; parameters at zero (biases at their initial value) and tiny ones; a 4-D
    convolution weight and a scalar gain; ``exclude``; centralisation, with and without clipping; float32
    gradients; a gradient that is None, and one missing; a unit exactly at its bound; a clip factor of 0. Each
    gives, after every call, the count returned and the gradients in the dict; at the end, the gradient arrays as
    the caller first held them and the parameters."""
    rng = np.random.default_rng(169)

    def model(scale, zero_bias=False, tiny=False):
        p = {"conv.weight": rng.normal(size=(3, 2, 2, 2)), "fc.weight": rng.normal(size=(4, 3)),
             "fc.bias": np.zeros(4) if zero_bias else 0.1 * rng.normal(size=4), "gain": np.array(1.5),
             "head.weight": rng.normal(size=(2, 4))}
        if tiny:
            p["fc.weight"] = 1e-5 * p["fc.weight"]
        g = {name: scale * rng.normal(size=w.shape) for name, w in p.items()}
        return p, g

    bound_p = {"w": np.array([[3.0, 4.0], [0.0, 2.5], [0.0, 2.0], [0.0, 4.0]]), "b": np.array([1.5, 2.0])}
    bound_g = {"w": np.array([[1.5, 2.0], [0.75, 1.0], [0.0, -1.0], [0.0, 2.5]]), "b": np.array([0.75, -1.0])}
    calls: list[Callable[[], object]] = []
    for kwargs, (params, grads), steps, change in (
            ({}, model(0.05), 2, ""),
            ({}, model(0.002), 2, ""),
            ({"clip_factor": 0.1}, model(0.3), 3, ""),
            ({"clip_factor": 0.05, "eps": 0.5}, model(0.2, zero_bias=True), 2, ""),
            ({}, model(0.001, zero_bias=True), 2, ""),
            ({"eps": 1e-2}, model(0.05, tiny=True), 2, ""),
            ({"exclude": ["head.weight", "gain"]}, model(0.5), 2, ""),
            ({"exclude": ("fc.bias",), "clip_factor": 0.2}, model(0.5, zero_bias=True), 2, ""),
            ({"centralize": True}, model(0.5), 2, ""),
            ({"centralize": True, "clip_factor": 10.0}, model(0.5), 2, ""),
            ({"centralize": True, "clip_factor": 0.2, "exclude": ["conv.weight"]}, model(1.0), 2, ""),
            ({"clip_factor": 0.05}, model(0.4), 2, "f32"),
            ({"centralize": True, "clip_factor": 0.3}, model(0.4), 2, "f32"),
            ({}, model(0.5), 2, "none"),
            ({"clip_factor": 0.1}, model(0.5), 2, "missing"),
            ({"clip_factor": 0.5}, (bound_p, bound_g), 1, ""),
            ({"clip_factor": 0.0}, model(0.5), 1, "")):
        drifts = [{name: 0.3 * rng.normal(size=np.shape(g)) for name, g in grads.items()} for _ in range(steps)]

        def call(kwargs=kwargs, params=params, grads=grads, steps=steps, change=change, drifts=drifts) -> object:
            held_p = {name: w.copy() for name, w in params.items()}
            trace: list[object] = []
            first: dict[str, Any] = {}
            for t in range(steps):
                g = {name: np.array(grads[name] * (1.0 + drifts[t][name]) if t else grads[name], dtype=np.float64)
                     for name in grads}
                if change == "f32":
                    g = {name: v.astype(np.float32) for name, v in g.items()}
                elif change == "none":
                    g["fc.weight"] = None
                elif change == "missing":
                    del g["gain"]
                if not first:
                    first = dict(g)
                try:
                    count = ns["adaptive_clip_grads"](held_p, g, **kwargs)
                except ValueError:
                    trace.append("ValueError")
                    continue
                trace.append((count, [None if v is None else v.copy() for v in g.values()]))
            trace.append(([None if v is None else v for v in first.values()], list(held_p.values())))
            return trace

        calls.append(call)
    return calls


# -- NDCG@k with graded relevance and tie-averaged DCG (McSherry and Najork 2008) ---------------------------------

ND_SIG = "def ndcg_at_k(relevance, scores, k=None, gain=\"exp2\", mask=None, ignore_ties=False, empty=0.0):\n"
ND_BODY = '''    rel = np.asarray(relevance, dtype=np.float64)
    sc = np.asarray(scores, dtype=np.float64)
    if rel.ndim == 1 and sc.ndim == 1:
        rel, sc = rel[None, :], sc[None, :]
    present = np.ones(rel.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool).reshape(rel.shape)
    if rel.ndim != 2 or sc.shape != rel.shape:
        raise ValueError(f"relevance of shape {rel.shape} and scores of shape {sc.shape}")
    if np.any(rel[present] < 0):
        raise ValueError("negative relevance")
    if k is not None and k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if gain == "exp2":
        gains = 2.0 ** rel - 1.0
    elif gain == "linear":
        gains = rel
    else:
        raise ValueError(f"unknown gain {gain!r}")
    per_query = np.empty(rel.shape[0])
    for q in range(rel.shape[0]):
        keep = np.flatnonzero(present[q])
        g = gains[q, keep]
        s = sc[q, keep]
        n = keep.size
        cut = n if k is None else min(k, n)
        discounts = np.zeros(n)
        discounts[:cut] = 1.0 / np.log2(np.arange(2, cut + 2))
        ideal = float(np.sum(np.sort(g)[::-1] * discounts))
        if ideal == 0.0:
            per_query[q] = np.nan if empty is None else empty
            continue
        order = np.argsort(-s, kind="stable")
        g_sorted, s_sorted = g[order], s[order]
        if ignore_ties:
            dcg = float(np.sum(g_sorted * discounts))
        else:
            dcg = 0.0
            start = 0
            while start < n:
                end = start + 1
                while end < n and s_sorted[end] == s_sorted[start]:
                    end += 1
                dcg += float(np.mean(g_sorted[start:end])) * float(np.sum(discounts[start:end]))
                start = end
        per_query[q] = dcg / ideal
    counted = ~np.isnan(per_query)
    mean = float(np.mean(per_query[counted])) if counted.any() else 0.0
    return mean, per_query
'''
ND_DOC = '''    """Normalised discounted cumulative gain at k of scored lists of items with graded relevance, ties
    counted by the expected DCG over their orderings ("Computing Information Retrieval Performance Measures
    Efficiently in the Presence of Tied Scores").

    ``relevance``: grades (Q, N) (or (N,): one query), >= 0 wherever an item is present, else ValueError;
    ``scores``: floats of the same shape (else ValueError), higher ranked first; ``mask``: None (every item
    present) or bools of that shape, False for an item not in the query's list (padding; its relevance and score
    are not read). ``k``: None (each query's whole list) or an int >= 1, else ValueError; ``gain``: "exp2" (``2 **
    r - 1``) or "linear" (``r``), else ValueError.

    Each query's present items are ranked by descending score, and the rank i (from 1) has the discount ``1 /
    log2(i + 1)`` for i <= k and 0 past k. Unless ``ignore_ties``, each group of equal scores, spanning ranks a to
    b, contributes the mean gain of its items times the sum of the discounts of ranks a to b (so a group across
    the cutoff counts in part); with ``ignore_ties`` tied items keep their order of index (lowest first). The
    ideal DCG is that of the present gains sorted in descending order, with the same discounts; the query's score
    is DCG / ideal DCG. A query whose ideal DCG is 0 (nothing relevant present) scores ``empty``, or with
    ``empty=None`` is left out: its score is NaN and it does not count in the mean.

    Returns ``(mean, per_query)``: the mean of the scores of the queries that count (0.0 when none does), a
    float, and every query's score, a float64 array (Q,). No argument is changed.
    """
'''
ND_GOLDEN = "\n\n" + ND_SIG + ND_DOC + ND_BODY
ND_DRIVER = '''"""Train a linear ranker by pointwise regression on synthetic queries and report NDCG@10 on held-out
queries: python eval_ranker.py"""

import numpy as np

from ranking.metrics import ndcg_at_k

FEATURES = 12
DOCS = 30
TRAIN_QUERIES = 200
TEST_QUERIES = 50
EPOCHS = 10
LR = 0.01


def make_queries(rng, true_w, count):
    x = rng.normal(size=(count, DOCS, FEATURES))
    latent = x @ true_w + 0.5 * rng.normal(size=(count, DOCS))
    cuts = np.quantile(latent, [0.5, 0.75, 0.9, 0.97], axis=1).T
    relevance = (latent[:, :, None] > cuts[:, None, :]).sum(axis=2)
    return x, relevance


def main():
    rng = np.random.default_rng(0)
    true_w = rng.normal(size=FEATURES)
    train_x, train_rel = make_queries(rng, true_w, TRAIN_QUERIES)
    test_x, test_rel = make_queries(rng, true_w, TEST_QUERIES)
    w = 0.1 * rng.normal(size=FEATURES)
    for epoch in range(EPOCHS + 1):
        if epoch:
            for q in rng.permutation(TRAIN_QUERIES):
                residual = train_x[q] @ w - train_rel[q]
                w -= LR * train_x[q].T @ residual / DOCS
        mean, per_query = ndcg_at_k(test_rel, test_x @ w, k=10)
        print(f"epoch {epoch}: NDCG@10 {mean:.4f}, worst query {per_query.min():.4f}, "
              f"cosine to the true weights {float(w @ true_w / np.linalg.norm(w) / np.linalg.norm(true_w)):.3f}")


if __name__ == "__main__":
    main()
'''

_nd = editor(ND_SIG, ND_BODY)
_ND_DCG = '''        if ignore_ties:
            dcg = float(np.sum(g_sorted * discounts))
        else:
            dcg = 0.0
            start = 0
            while start < n:
                end = start + 1
                while end < n and s_sorted[end] == s_sorted[start]:
                    end += 1
                dcg += float(np.mean(g_sorted[start:end])) * float(np.sum(discounts[start:end]))
                start = end
'''
_ND_TIES = '''                dcg += float(np.mean(g_sorted[start:end])) * float(np.sum(discounts[start:end]))
'''

ND_WRONG = {
    "k of None cut at 10": _nd("cut = n if k is None else min(k, n)", "cut = min(10 if k is None else k, n)"),
    "ties ignored": _nd(_ND_DCG, "        dcg = float(np.sum(g_sorted * discounts))\n"),
    "tie group past the cutoff counted whole": _nd(_ND_TIES, '''                if start < cut:
                    full = 1.0 / np.log2(np.arange(start + 2, end + 2))
                    dcg += float(np.mean(g_sorted[start:end])) * float(np.sum(full))
'''),
    "linear gain ignored": _nd('''    if gain == "exp2":
        gains = 2.0 ** rel - 1.0
    elif gain == "linear":
        gains = rel
    else:
        raise ValueError(f"unknown gain {gain!r}")
''', '''    gains = 2.0 ** rel - 1.0
'''),
    "discount one rank late": _nd("discounts[:cut] = 1.0 / np.log2(np.arange(2, cut + 2))",
                                  "discounts[:cut] = 1.0 / np.log2(np.arange(3, cut + 3))"),
    "mask ignored": _nd("present = np.ones(rel.shape, dtype=bool) if mask is None else "
                        "np.asarray(mask, dtype=bool).reshape(rel.shape)",
                        "present = np.ones(rel.shape, dtype=bool)"),
    "masked items ranked with no gain": _nd('''        keep = np.flatnonzero(present[q])
        g = gains[q, keep]
        s = sc[q, keep]
        n = keep.size
''', '''        keep = np.arange(rel.shape[1])
        g = np.where(present[q], gains[q], 0.0)
        s = sc[q, keep]
        n = keep.size
'''),
    "empty not honoured": _nd("per_query[q] = np.nan if empty is None else empty", "per_query[q] = 0.0"),
    "left-out queries in the mean's count": _nd(
        "mean = float(np.mean(per_query[counted])) if counted.any() else 0.0",
        "mean = float(np.sum(per_query[counted]) / per_query.size)"),
    "ties broken by the highest index": _nd('order = np.argsort(-s, kind="stable")',
                                            'order = np.argsort(s, kind="stable")[::-1]'),
    "k below 1 accepted": _nd('''    if k is not None and k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
''', ""),
    "ideal DCG not cut at k": _nd("ideal = float(np.sum(np.sort(g)[::-1] * discounts))",
                                  "ideal = float(np.sum(np.sort(g)[::-1] / np.log2(np.arange(2, n + 2))))"),
}
ND_RIGHT = {
    "groupby, one query at a time": ND_SIG + '''    import itertools
    import math

    R = np.array(relevance, dtype=float)
    S = np.array(scores, dtype=float)
    if R.ndim == 1 and S.ndim == 1:
        R, S = R.reshape(1, -1), S.reshape(1, -1)
    if R.ndim != 2 or R.shape != S.shape:
        raise ValueError("shapes")
    M = np.full(R.shape, True) if mask is None else np.array(mask, dtype=bool).reshape(R.shape)
    if (R[M] < 0).any():
        raise ValueError("relevance")
    if k is not None and not k >= 1:
        raise ValueError("k")
    if gain not in ("exp2", "linear"):
        raise ValueError("gain")

    def to_gain(r):
        return 2.0 ** r - 1.0 if gain == "exp2" else r

    def disc(rank, limit):
        return 1.0 / math.log2(rank + 1) if rank <= limit else 0.0

    out = []
    for q in range(R.shape[0]):
        items = [(S[q, j], to_gain(R[q, j]), j) for j in range(R.shape[1]) if M[q, j]]
        limit = len(items) if k is None else k
        best = sorted((it[1] for it in items), reverse=True)
        idcg = sum(gv * disc(i + 1, limit) for i, gv in enumerate(best))
        if idcg == 0:
            out.append(float("nan") if empty is None else float(empty))
            continue
        ranked = sorted(items, key=lambda it: (-it[0], it[2]))
        dcg = 0.0
        rank = 1
        if ignore_ties:
            for _, gv, _ in ranked:
                dcg += gv * disc(rank, limit)
                rank += 1
        else:
            for _, group in itertools.groupby(ranked, key=lambda it: it[0]):
                members = list(group)
                mean_gain = sum(it[1] for it in members) / len(members)
                dcg += mean_gain * sum(disc(rank + i, limit) for i in range(len(members)))
                rank += len(members)
        out.append(dcg / idcg)
    per_query = np.array(out, dtype=np.float64)
    valid = [v for v in out if not math.isnan(v)]
    return (sum(valid) / len(valid) if valid else 0.0), per_query
''',
    "group ids and bincount": ND_SIG + '''    r = np.asarray(relevance, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    if r.ndim == 1 and s.ndim == 1:
        r, s = r.reshape(1, -1), s.reshape(1, -1)
    if s.shape != r.shape or r.ndim != 2:
        raise ValueError("relevance and scores differ in shape")
    m = np.ones_like(r, dtype=bool) if mask is None else np.asarray(mask).astype(bool).reshape(r.shape)
    if np.any(np.where(m, r, 0.0) < 0):
        raise ValueError("negative grade")
    if k is not None and k < 1:
        raise ValueError("k < 1")
    if gain not in {"exp2", "linear"}:
        raise ValueError("gain")
    G = np.expm1(r * np.log(2.0)) if gain == "exp2" else r
    result = np.zeros(r.shape[0])
    for q, (gq, sq, mq) in enumerate(zip(G, s, m, strict=True)):
        gq, sq = gq[mq], sq[mq]
        n = gq.size
        ranks = np.arange(1, n + 1)
        disc = np.where(ranks <= (n if k is None else k), 1.0 / np.log2(ranks + 1.0), 0.0)
        idcg = np.dot(-np.sort(-gq), disc)
        if not idcg > 0:
            result[q] = np.nan if empty is None else empty
            continue
        order = np.lexsort((np.arange(n), -sq))
        g_ord, s_ord = gq[order], sq[order]
        if ignore_ties:
            result[q] = np.dot(g_ord, disc) / idcg
            continue
        group = np.concatenate(([0], np.cumsum(s_ord[1:] != s_ord[:-1]))) if n else np.zeros(0, dtype=int)
        sizes = np.bincount(group)
        mean_gain = np.bincount(group, weights=g_ord) / sizes
        result[q] = np.dot(mean_gain[group], disc) / idcg
    ok = ~np.isnan(result)
    return (float(result[ok].mean()) if ok.any() else 0.0), result
''',
}


def nd_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general queries: the defaults and k of 10 on untied scores; ties inside the cutoff and across it,
    tied with ``ignore_ties`` (whose order then depends on the index); k of None, 1 and past the list's length;
    linear gains and fractional grades; a mask with padding of relevance -1, and a fully masked query; queries with
    nothing relevant, with ``empty`` of 0, 1 and None, and a batch of such queries only; a single 1-D query; k of
    0, negative relevance, an unknown gain and shapes that do not match. Each gives the mean, the per-query scores,
    and the arguments as the caller holds them afterwards."""
    rng = np.random.default_rng(170)
    rel = rng.integers(0, 4, size=(5, 12))
    rel[:, 0] = 3
    untied = rng.normal(size=(5, 12))
    tied = np.round(rng.normal(size=(5, 12)), 0) / 2.0
    tied[0, :6] = 1.0
    tied[1] = 0.0
    tied[2, 3:9] = -0.5
    tied[3, :5] = 2.0
    tied[3, 5:] = -2.0
    pad = rng.random(size=(5, 12)) < 0.3
    pad[:, 0] = False
    pad[4] = True
    padded_rel = np.where(pad, -1, rel)
    nothing = rel.copy()
    nothing[1] = 0
    nothing[3] = 0
    fractional = rng.random(size=(5, 12)) * 3.0
    cases = [
        ((rel, untied), {}),
        ((rel, untied), {"k": 10}),
        ((rel, tied), {"k": 10}),
        ((rel, tied), {"k": 4}),
        ((rel, tied), {"k": 3, "ignore_ties": True}),
        ((rel, tied), {"ignore_ties": True}),
        ((rel, tied), {}),
        ((rel, untied), {"k": 1}),
        ((rel, tied), {"k": 30}),
        ((rel, untied), {"k": 5, "gain": "linear"}),
        ((fractional, tied), {"k": 6, "gain": "linear"}),
        ((fractional, untied), {"k": 6}),
        ((padded_rel, untied), {"k": 5, "mask": ~pad}),
        ((padded_rel, tied), {"mask": ~pad, "empty": None}),
        ((rel, tied), {"k": 5, "mask": ~pad, "gain": "linear"}),
        ((nothing, untied), {"k": 5}),
        ((nothing, tied), {"k": 5, "empty": 1.0}),
        ((nothing, untied), {"empty": None}),
        ((nothing[[1, 3]], untied[[1, 3]]), {"empty": None}),
        ((rel[2], tied[2]), {"k": 4}),
        ((rel[0], untied[0]), {"gain": "linear", "ignore_ties": True}),
        ((rel, untied), {"k": 0}),
        ((rel - 1, untied), {"k": 5}),
        ((rel, untied), {"gain": "log"}),
        ((rel, untied[:, :10]), {"k": 5}),
    ]
    calls: list[Callable[[], object]] = []
    for (relevance, scores), kwargs in cases:

        def call(relevance=relevance, scores=scores, kwargs=kwargs) -> object:
            held_rel, held_scores = relevance.copy(), scores.copy()
            held_kwargs = {key: (v.copy() if isinstance(v, np.ndarray) else v) for key, v in kwargs.items()}
            out = ns["ndcg_at_k"](held_rel, held_scores, **held_kwargs)
            return out, held_rel, held_scores, held_kwargs.get("mask")

        calls.append(call)
    return calls


# -- TD(lambda) with accumulating, replacing and dutch traces (Sutton and Barto 2018; van Seijen et al. 2016) -----

TD_HEAD = '''class TDLambda:
    """Policy evaluation by TD(lambda) with a linear value function ``v(s) = w . x(s)`` ("Reinforcement
    Learning: An Introduction", chapter 12): the weights ``self.w`` and the eligibility trace ``self.z``, carried
    from step to step and cleared when an episode ends; the trace is accumulating, replacing, or the dutch trace
    of true online TD(lambda) ("True Online Temporal-Difference Learning"), which also keeps ``self.v_old``.
    Settings in ``self.cfg.td``."""

    def __init__(self, cfg, num_features):
        self.cfg = cfg
        self.w = np.zeros(num_features)
        self.z = np.zeros(num_features)
        self.v_old = 0.0
        self.steps = 0

    def step(self, features, reward, next_features, terminated, truncated=False):
'''
TD_BODY = '''        c = self.cfg.td
        if c.trace not in ("accumulating", "replacing", "dutch"):
            raise ValueError(f"unknown trace {c.trace!r}")
        if not (c.alpha > 0.0 and 0.0 <= c.gamma <= 1.0 and 0.0 <= c.lam <= 1.0):
            raise ValueError("alpha must be positive, gamma and lam in [0, 1]")
        x = np.asarray(features, dtype=np.float64)
        x_next = np.asarray(next_features, dtype=np.float64)
        if x.shape != self.w.shape or x_next.shape != self.w.shape:
            raise ValueError(f"features of shape {x.shape} and {x_next.shape} for weights {self.w.shape}")
        v = float(self.w @ x)
        v_next = 0.0 if terminated else float(self.w @ x_next)
        delta = float(reward) + c.gamma * v_next - v
        decay = c.gamma * c.lam
        if c.trace == "dutch":
            correction = 1.0 - c.alpha * decay * float(self.z @ x)
            self.z *= decay
            self.z += correction * x
            self.w += c.alpha * (delta + v - self.v_old) * self.z - c.alpha * (v - self.v_old) * x
            self.v_old = v_next
        else:
            self.z *= decay
            if c.trace == "replacing":
                hit = x != 0.0
                self.z[hit] = x[hit]
            else:
                self.z += x
            self.w += c.alpha * delta * self.z
        if terminated or truncated:
            self.z[...] = 0.0
            self.v_old = 0.0
        self.steps += 1
        return delta
'''
TD_DOC = '''        """One step of TD(lambda) on the transition from the state of ``features`` to that of
        ``next_features``; called once per environment step. Returns the TD error, a float.

        ``features``, ``next_features``: float arrays of the weights' shape (else ValueError); ``reward``: a
        float; ``terminated``: the next state is terminal (its value is 0, nothing to bootstrap from);
        ``truncated``: the episode was cut short there, its value still bootstrapped. Settings, read from
        ``self.cfg.td``: ``alpha`` (> 0), ``gamma`` and ``lam`` (each in [0, 1]) and ``trace`` ("accumulating",
        "replacing" or "dutch"); else ValueError, before anything changes.

        With ``v = w . x`` and ``v' = w . x'`` (0 when ``terminated``), both from the weights before the step,
        ``delta = reward + gamma * v' - v``. Accumulating: ``z = gamma * lam * z + x``; replacing: ``z = gamma *
        lam * z``, then ``z_i = x_i`` wherever ``x_i != 0``; in both, ``w += alpha * delta * z``. Dutch (true
        online TD(lambda)): ``z = gamma * lam * z + (1 - alpha * gamma * lam * (z . x)) * x``, the dot product
        taken with z before the step, then ``w += alpha * (delta + v - v_old) * z - alpha * (v - v_old) * x`` and
        ``v_old = v'``. When ``terminated`` or ``truncated``, after the update, z is set to 0 and ``v_old`` to
        0.0, for the next episode.

        ``self.w`` and ``self.z`` are changed in place (the arrays themselves); ``self.steps`` rises by one.
        Neither features array is changed.
        """
'''
TD_GOLDEN = "\n\n" + TD_HEAD + TD_DOC + TD_BODY
TD_CONFIG = '''"""Experiment configuration."""

from dataclasses import dataclass, field


@dataclass
class TDConfig:
    alpha: float = 0.1
    gamma: float = 1.0
    lam: float = 0.8
    trace: str = "accumulating"


@dataclass
class RunConfig:
    states: int = 19
    episodes: int = 100
    td: TDConfig = field(default_factory=TDConfig)
'''
TD_DRIVER = '''"""Evaluate the random policy of the 19-state random walk by TD(lambda) with one-hot features:
python run_random_walk.py"""

import numpy as np

from tdlearn.config import RunConfig
from tdlearn.td import TDLambda


def main():
    rng = np.random.default_rng(0)
    cfg = RunConfig()
    n = cfg.states
    true_values = np.arange(1, n + 1) / (n + 1) * 2.0 - 1.0
    features = np.eye(n)
    agent = TDLambda(cfg, n)
    for episode in range(1, cfg.episodes + 1):
        state = n // 2
        while True:
            following = state + (1 if rng.random() < 0.5 else -1)
            if following < 0 or following >= n:
                reward = 1.0 if following >= n else -1.0
                agent.step(features[state], reward, np.zeros(n), True)
                break
            agent.step(features[state], 0.0, features[following], False)
            state = following
        if episode % 20 == 0:
            rms = float(np.sqrt(np.mean((agent.w - true_values) ** 2)))
            print(f"episode {episode}: RMS error {rms:.4f}, steps {agent.steps}")


if __name__ == "__main__":
    main()
'''

_td = editor(TD_HEAD, TD_BODY)
_TD_RESET = '''        if terminated or truncated:
            self.z[...] = 0.0
            self.v_old = 0.0
'''
_TD_DUTCH = '''            correction = 1.0 - c.alpha * decay * float(self.z @ x)
            self.z *= decay
            self.z += correction * x
'''

TD_WRONG = {
    "pins lam": _td("decay = c.gamma * c.lam", "decay = c.gamma * 0.8"),
    "gamma left out of the trace decay": _td("decay = c.gamma * c.lam", "decay = c.lam"),
    "bootstraps from the terminal state": _td("v_next = 0.0 if terminated else float(self.w @ x_next)",
                                              "v_next = float(self.w @ x_next)"),
    "truncation not bootstrapped": _td("v_next = 0.0 if terminated else float(self.w @ x_next)",
                                       "v_next = 0.0 if terminated or truncated else float(self.w @ x_next)"),
    "traces kept across episodes": _td(_TD_RESET, ""),
    "traces kept after truncation": _td("        if terminated or truncated:\n", "        if terminated:\n"),
    "replacing traces accumulate": _td('''            if c.trace == "replacing":
                hit = x != 0.0
                self.z[hit] = x[hit]
            else:
                self.z += x
''', "            self.z += x\n"),
    "dutch correction from the decayed trace": _td(_TD_DUTCH, '''            self.z *= decay
            correction = 1.0 - c.alpha * decay * float(self.z @ x)
            self.z += correction * x
'''),
    "v_old set to the current value": _td("            self.v_old = v_next\n", "            self.v_old = v\n"),
    "v_old carried across episodes": _td(_TD_RESET, '''        if terminated or truncated:
            self.z[...] = 0.0
'''),
    "trace rebound, not updated in place": _td('''            self.z *= decay
            if c.trace == "replacing":
                hit = x != 0.0
                self.z[hit] = x[hit]
            else:
                self.z += x
''', '''            self.z = decay * self.z
            if c.trace == "replacing":
                self.z = np.where(x != 0.0, x, self.z)
            else:
                self.z = self.z + x
''').replace("            self.z[...] = 0.0\n", "            self.z = np.zeros_like(self.w)\n"),
    "weights updated before the trace": _td('''            self.z *= decay
            if c.trace == "replacing":
                hit = x != 0.0
                self.z[hit] = x[hit]
            else:
                self.z += x
            self.w += c.alpha * delta * self.z
''', '''            self.w += c.alpha * delta * self.z
            self.z *= decay
            if c.trace == "replacing":
                hit = x != 0.0
                self.z[hit] = x[hit]
            else:
                self.z += x
'''),
}
TD_RIGHT = {
    "feature by feature": TD_HEAD + '''        cfg = self.cfg.td
        kind = cfg.trace
        if kind not in {"accumulating", "replacing", "dutch"}:
            raise ValueError("trace")
        if cfg.alpha <= 0 or not 0 <= cfg.gamma <= 1 or not 0 <= cfg.lam <= 1:
            raise ValueError("settings")
        phi = [float(v) for v in np.ravel(features)]
        phi2 = [float(v) for v in np.ravel(next_features)]
        n = len(self.w)
        if np.shape(features) != self.w.shape or np.shape(next_features) != self.w.shape:
            raise ValueError("shape")
        value = sum(self.w[i] * phi[i] for i in range(n))
        value_next = 0.0 if terminated else sum(self.w[i] * phi2[i] for i in range(n))
        err = float(reward) + cfg.gamma * value_next - value
        gl = cfg.gamma * cfg.lam
        if kind == "dutch":
            zx = sum(self.z[i] * phi[i] for i in range(n))
            for i in range(n):
                self.z[i] = gl * self.z[i] + (1.0 - cfg.alpha * gl * zx) * phi[i]
            for i in range(n):
                self.w[i] += cfg.alpha * ((err + value - self.v_old) * self.z[i] - (value - self.v_old) * phi[i])
            self.v_old = value_next
        else:
            for i in range(n):
                if kind == "replacing" and phi[i] != 0.0:
                    self.z[i] = phi[i]
                elif kind == "replacing":
                    self.z[i] = gl * self.z[i]
                else:
                    self.z[i] = gl * self.z[i] + phi[i]
                self.w[i] += cfg.alpha * err * self.z[i]
        if terminated or truncated:
            for i in range(n):
                self.z[i] = 0.0
            self.v_old = 0.0
        self.steps = self.steps + 1
        return float(err)
''',
    "ufuncs with out=, one reset": TD_HEAD + '''        td = self.cfg.td
        if td.trace not in ("accumulating", "replacing", "dutch"):
            raise ValueError("unknown trace")
        if not td.alpha > 0 or not (0 <= td.gamma <= 1 and 0 <= td.lam <= 1):
            raise ValueError("bad settings")
        phi = np.array(features, dtype=float)
        phi_next = np.array(next_features, dtype=float)
        if phi.shape != self.w.shape or phi_next.shape != self.w.shape:
            raise ValueError("feature shape")
        v = np.dot(self.w, phi)
        v_next = np.dot(self.w, phi_next) * (not terminated)
        delta = reward + td.gamma * v_next - v
        gl = td.gamma * td.lam
        z = self.z
        if td.trace == "dutch":
            scale = 1.0 - td.alpha * gl * np.dot(z, phi)
            np.multiply(z, gl, out=z)
            np.add(z, scale * phi, out=z)
            np.add(self.w, td.alpha * (delta + v - self.v_old) * z, out=self.w)
            np.subtract(self.w, td.alpha * (v - self.v_old) * phi, out=self.w)
            self.v_old = float(v_next)
        else:
            decayed = gl * z
            if td.trace == "replacing":
                np.copyto(z, np.where(phi != 0, phi, decayed))
            else:
                np.copyto(z, decayed + phi)
            self.w += (td.alpha * delta) * z
        if terminated or truncated:
            z.fill(0.0)
            self.v_old = 0.0
        self.steps += 1
        return float(delta)
''',
}


def td_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of steps along episodes (each event: the episode goes on, is terminated, truncated, or both) on dense
    and sparse features: the default config; another gamma and lam, a lam of 0 and of 1; replacing traces on
    binary and on real sparse features; dutch traces over several episodes, with truncation and with both flags;
    a terminal state passed with nonzero features; an unknown trace, a lam above 1 and features of the wrong
    shape. Each gives, after every step, the TD error, the weights, the trace, ``v_old`` and the step count; at
    the end, the arrays first stored (as a caller that keeps them holds them) and the features passed."""
    rng = np.random.default_rng(171)

    def config(alpha=0.1, gamma=1.0, lam=0.8, trace="accumulating"):
        return SimpleNamespace(td=SimpleNamespace(alpha=alpha, gamma=gamma, lam=lam, trace=trace))

    calls: list[Callable[[], object]] = []
    for cfg, events, kind in (
            (config(), "....T...T", "dense"),
            (config(gamma=0.9, lam=0.5, alpha=0.05), ".....T..", "dense"),
            (config(gamma=0.95, lam=0.0), "...T..", "dense"),
            (config(gamma=0.9, lam=1.0), "...R...", "dense"),
            (config(trace="replacing", gamma=0.9), "......T..", "binary"),
            (config(trace="replacing", lam=0.7, gamma=0.8), ".....R...", "sparse"),
            (config(trace="dutch"), "....T....", "dense"),
            (config(trace="dutch", gamma=0.9, lam=0.6, alpha=0.2), "...R..B..", "dense"),
            (config(trace="dutch", gamma=0.8, lam=0.9, alpha=0.3), "......T.", "binary"),
            (config(trace="dutch", gamma=0.9, lam=0.7, alpha=0.15), "..R...R..", "sparse"),
            (config(gamma=0.9), "..B..R.", "sparse"),
            (config(trace="eligibility"), "..", "dense"),
            (config(lam=1.5), "..", "dense"),
            (config(), ".W.", "dense")):
        size = 6
        states = []
        for _ in range(len(events) + 1):
            if kind == "binary":
                states.append((rng.random(size) < 0.4).astype(float))
            elif kind == "sparse":
                states.append(np.where(rng.random(size) < 0.5, rng.normal(size=size), 0.0))
            else:
                states.append(rng.normal(size=size))
        rewards = rng.normal(size=len(events))

        def call(cfg=cfg, events=events, states=states, rewards=rewards, size=size) -> object:
            agent = ns["TDLambda"](cfg, size)
            agent.w[:] = np.linspace(-0.5, 0.5, size)
            held_w, held_z = agent.w, agent.z
            passed = [s.copy() for s in states]
            trace: list[object] = []
            for t, event in enumerate(events):
                x = passed[t] if event != "W" else np.ones(size + 1)
                try:
                    if event in "RB":
                        delta = agent.step(x, float(rewards[t]), passed[t + 1], event == "B", truncated=True)
                    else:
                        delta = agent.step(x, float(rewards[t]), passed[t + 1], event == "T")
                except ValueError:
                    trace.append("ValueError")
                    continue
                trace.append((delta, agent.w.copy(), agent.z.copy(), agent.v_old, agent.steps))
            trace.append((held_w.copy(), held_z.copy(), passed))
            return trace

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "68-LDAMDeferredReweight", "files": {"longtail/__init__.py": "", "longtail/config.py": LD_CONFIG,
     "longtail/losses.py": '"""Losses for long-tailed classification."""\n\nimport numpy as np\n' + LD_GOLDEN,
     "train_ldam.py": LD_DRIVER},
     "function": "longtail/losses.py::LDAMLoss.forward", "command": "python train_ldam.py",
     "head": _NP, "wrong": LD_WRONG, "right": LD_RIGHT, "check": ld_check,
     "gaps": {"pins s": ["ldam.s", "z = c.ldam.s * adjusted"],
              "max_m ignored": ["max_m"],
              "margin from the square root of the count": ["m_list = 1.0 / np.sqrt(np.sqrt(counts))"],
              "margin added to the target logit": ["adjusted[rows, y] -= m_list[y]"],
              "margin subtracted after the scale": ["adjusted[rows, y] -= m_list[y]", "z = c.ldam.s * adjusted"],
              "re-weighting from the epoch after start": ["start_epoch", "epoch >= c.drw.start_epoch"],
              "start_epoch of None compared": ["start_epoch", "c.drw.start_epoch is not None"],
              "weights not normalised": ["weights = weights / np.sum(weights) * num_classes"],
              "mean over the samples, not the weights": ["reduction", "np.sum(w * nll) / np.sum(w)"],
              "empty classes unguarded": ["np.maximum(self.cls_num_list.astype(np.float64), 1.0)"],
              "reduction ignored": ["reduction"]}},
    {"name": "69-AdaptiveGradClip", "files": {"nfnet/__init__.py": "", "nfnet/agc.py":
     '"""Adaptive gradient clipping."""\n\nimport numpy as np\n' + AG_GOLDEN, "train_agc.py": AG_DRIVER},
     "function": "nfnet/agc.py::adaptive_clip_grads", "command": "python train_agc.py",
     "head": _NP, "wrong": AG_WRONG, "right": AG_RIGHT, "check": ag_check,
     "gaps": {"pins clip_factor": ["clip_factor"],
              "eps ignored": ["eps", "np.maximum(param_norm, eps)"],
              "eps added, not a floor": ["eps", "np.maximum(param_norm, eps)"],
              "norm over the whole tensor": [
                  "return np.sqrt(np.sum(a * a, axis=tuple(range(1, a.ndim)), keepdims=True))"],
              "units along the last axis": [
                  "return np.sqrt(np.sum(a * a, axis=tuple(range(1, a.ndim)), keepdims=True))"],
              "exclude ignored": ["exclude"],
              "centralize ignored": ["centralize"],
              "1-D gradients centralised too": ["centralize", "if centralize and g.ndim > 1:"],
              "centralised after clipping": ["centralize",
                                             "g -= g.mean(axis=tuple(range(1, g.ndim)), keepdims=True)"],
              "gradients rebound in the dict": [
                  "g *= np.where(over, max_norm / np.maximum(grad_norm, 1e-6), 1.0)"],
              "missing gradients not skipped": ["g = grads.get(name)"],
              "units at the bound counted as clipped": ["over = grad_norm > max_norm"]}},
    {"name": "70-NDCGTiedScores", "files": {"ranking/__init__.py": "", "ranking/metrics.py":
     '"""Ranking metrics."""\n\nimport numpy as np\n' + ND_GOLDEN, "eval_ranker.py": ND_DRIVER},
     "function": "ranking/metrics.py::ndcg_at_k", "command": "python eval_ranker.py",
     "head": _NP, "wrong": ND_WRONG, "right": ND_RIGHT, "check": nd_check,
     "gaps": {"k of None cut at 10": ["cut = n if k is None else min(k, n)"],
              "ties ignored": ["ignore_ties", "while end < n and s_sorted[end] == s_sorted[start]:"],
              "tie group past the cutoff counted whole": [
                  "dcg += float(np.mean(g_sorted[start:end])) * float(np.sum(discounts[start:end]))",
                  "discounts[:cut] = 1.0 / np.log2(np.arange(2, cut + 2))"],
              "linear gain ignored": ["gain"],
              "discount one rank late": ["discounts[:cut] = 1.0 / np.log2(np.arange(2, cut + 2))"],
              "mask ignored": ["mask"],
              "masked items ranked with no gain": ["mask", "keep = np.flatnonzero(present[q])"],
              "empty not honoured": ["empty"],
              "left-out queries in the mean's count": [
                  "empty", "mean = float(np.mean(per_query[counted])) if counted.any() else 0.0"],
              "ties broken by the highest index": ["ignore_ties", 'order = np.argsort(-s, kind="stable")'],
              "k below 1 accepted": ["if k is not None and k < 1:"],
              "ideal DCG not cut at k": ["ideal = float(np.sum(np.sort(g)[::-1] * discounts))"]}},
    {"name": "71-TDLambdaTraces", "files": {"tdlearn/__init__.py": "", "tdlearn/config.py": TD_CONFIG,
     "tdlearn/td.py": '"""Temporal-difference policy evaluation."""\n\nimport numpy as np\n' + TD_GOLDEN,
     "run_random_walk.py": TD_DRIVER},
     "function": "tdlearn/td.py::TDLambda.step", "command": "python run_random_walk.py",
     "head": _NP, "wrong": TD_WRONG, "right": TD_RIGHT, "check": td_check,
     "gaps": {"pins lam": ["lam"],
              "gamma left out of the trace decay": ["gamma", "decay = c.gamma * c.lam"],
              "bootstraps from the terminal state": [
                  "terminated", "v_next = 0.0 if terminated else float(self.w @ x_next)"],
              "truncation not bootstrapped": ["truncated", "v_next = 0.0 if terminated else float(self.w @ x_next)"],
              "traces kept across episodes": ["self.z[...] = 0.0"],
              "traces kept after truncation": ["truncated", "if terminated or truncated:"],
              "replacing traces accumulate": ["trace", "self.z[hit] = x[hit]"],
              "dutch correction from the decayed trace": [
                  "trace", "correction = 1.0 - c.alpha * decay * float(self.z @ x)"],
              "v_old set to the current value": ["self.v_old = v_next"],
              "v_old carried across episodes": ["v_old", "self.v_old = 0.0"],
              "trace rebound, not updated in place": ["self.z *= decay", "self.z += x"],
              "weights updated before the trace": ["self.w += c.alpha * delta * self.z"]}},
]
"""The seventeenth fresh held-out tasks."""
