"""An eighth held-out set for ``wrong_answers.py --set fresh7``: two numpy tasks of shapes that no other set nor any
test fixture has. The first is layer normalisation (Ba, Kiros and Hinton 2016) as a module's ``forward`` reading
``self.normalized_shape``: statistics over the last ``len(normalized_shape)`` axes with the biased variance and
``eps`` under the square root, and an ``elementwise_affine`` flag; the driver normalises the last axis of a
three-axis activation with the affine parameters on, so neither several normalised axes nor the flag off are ever
reached. The second is R-Drop's objective (Liang et al. 2021): the cross-entropy of two dropout passes and their
symmetric KL divergence weighted by ``self.args.alpha``, with a padding mask whose targets are ignored and a guard
for a batch of padding only; the driver classifies whole examples and never passes a mask. Written before its first
run, and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

# -- Layer normalisation over the last axes (Ba, Kiros and Hinton 2016) -------------------------------------------

LN_HEAD = '''class LayerNorm:
    """Layer normalisation over the trailing axes of ``normalized_shape`` (an int or a tuple of ints), with a
    learned elementwise scale and shift when ``elementwise_affine``."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = np.ones(self.normalized_shape)
            self.bias = np.zeros(self.normalized_shape)
        else:
            self.weight = None
            self.bias = None

    def forward(self, x):
'''
LN_BODY = '''        k = len(self.normalized_shape)
        axes = tuple(range(x.ndim - k, x.ndim))
        mean = np.mean(x, axis=axes, keepdims=True)
        centred = x - mean
        var = np.mean(centred ** 2, axis=axes, keepdims=True)
        out = centred / np.sqrt(var + self.eps)
        if self.elementwise_affine:
            out = out * self.weight + self.bias
        return out
'''
LN_DOC = '''        """Normalise ``x``, whose trailing axes have the shape ``self.normalized_shape``, over those
        trailing axes together (all ``len(normalized_shape)`` of them, not the last alone): subtract their mean and
        divide by ``sqrt(var + eps)``, where ``var`` is the biased variance (divided by the number of elements)
        over the same axes. When ``elementwise_affine`` the result is then scaled by ``self.weight`` and shifted by
        ``self.bias`` (both of shape ``normalized_shape``); otherwise it is returned as it is. ``x`` is not
        changed; the result has its shape."""
'''
LN_GOLDEN = "\n\n" + LN_HEAD + LN_DOC + LN_BODY
LN_DRIVER = '''"""Run a small pre-norm residual MLP block over a batch of token features: python run_block.py"""

import numpy as np

from layers.norm import LayerNorm


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


class Block:
    def __init__(self, rng, dim, hidden):
        self.norm = LayerNorm(dim)
        self.norm.weight = 1.0 + 0.1 * rng.normal(size=dim)
        self.norm.bias = 0.1 * rng.normal(size=dim)
        self.w1 = rng.normal(scale=dim ** -0.5, size=(dim, hidden))
        self.w2 = rng.normal(scale=hidden ** -0.5, size=(hidden, dim))

    def __call__(self, x):
        return x + gelu(self.norm.forward(x) @ self.w1) @ self.w2


def main():
    rng = np.random.default_rng(0)
    blocks = [Block(rng, 8, 16) for _ in range(2)]
    x = 3.0 + 2.0 * rng.normal(size=(2, 5, 8))
    for i, block in enumerate(blocks):
        x = block(x)
        print(f"block {i}: mean {x.mean():.4f}, std {x.std():.4f}, first {x[0, 0, :3].round(4).tolist()}")


if __name__ == "__main__":
    main()
'''

_ln = editor(LN_HEAD, LN_BODY)

LN_WRONG = {
    "last axis only": _ln("axes = tuple(range(x.ndim - k, x.ndim))", "axes = (-1,)"),
    "every axis after the batch": _ln("axes = tuple(range(x.ndim - k, x.ndim))", "axes = tuple(range(1, x.ndim))"),
    "unbiased variance": _ln("var = np.mean(centred ** 2, axis=axes, keepdims=True)",
                             "var = np.var(x, axis=axes, keepdims=True, ddof=1)"),
    "eps outside the square root": _ln("out = centred / np.sqrt(var + self.eps)",
                                       "out = centred / (np.sqrt(var) + self.eps)"),
    "pins eps": _ln("out = centred / np.sqrt(var + self.eps)", "out = centred / np.sqrt(var + 1e-5)"),
    "affine flag ignored": _ln('''        if self.elementwise_affine:
            out = out * self.weight + self.bias
''', '''        out = out * self.weight + self.bias
'''),
    "shift before the scale": _ln("out = out * self.weight + self.bias", "out = (out + self.bias) * self.weight"),
    "input centred in place": _ln("        centred = x - mean\n", "        centred = x\n        centred -= mean\n"),
}
LN_RIGHT = {
    "flattened rows": LN_HEAD + '''        size = int(np.prod(self.normalized_shape))
        rows = x.reshape(-1, size)
        mu = rows.sum(axis=1, keepdims=True) / size
        sigma2 = ((rows - mu) ** 2).sum(axis=1, keepdims=True) / size
        y = ((rows - mu) / np.sqrt(sigma2 + self.eps)).reshape(x.shape)
        if not self.elementwise_affine:
            return y
        return y * self.weight + self.bias
''',
    "reciprocal root, affine through np.add": LN_HEAD + '''        lead = x.ndim - len(self.normalized_shape)
        red = tuple(lead + i for i in range(len(self.normalized_shape)))
        mean = x.mean(axis=red, keepdims=True)
        var = np.square(x - mean).mean(axis=red, keepdims=True)
        rstd = 1.0 / np.sqrt(var + self.eps)
        y = (x - mean) * rstd
        if self.elementwise_affine:
            y = np.add(np.multiply(y, self.weight), self.bias)
        return y
''',
}


def ln_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of ``forward`` on general settings: one, two and three normalised axes, an int and a tuple shape, a
    leading batch of none or several axes, eps large against the variance, the affine flag on (random weights)
    and off; each gives the result and the input as the caller holds it afterwards."""
    rng = np.random.default_rng(71)
    calls = []
    for shape, norm_shape, eps, affine, scale in (((2, 5, 8), 8, 1e-5, True, 2.0),
                                                   ((3, 4, 6), (4, 6), 1e-5, True, 1.5),
                                                   ((2, 3, 4, 5), (3, 4, 5), 0.1, True, 0.5),
                                                   ((4, 6), (6,), 0.5, False, 0.3),
                                                   ((2, 2, 3, 4), (3, 4), 1e-3, False, 1.0),
                                                   ((5,), 5, 1.0, True, 0.8),
                                                   ((3, 2, 7), (2, 7), 0.05, True, 0.2)):
        x0 = 1.5 + scale * rng.normal(size=shape)
        ns_shape = (norm_shape,) if isinstance(norm_shape, int) else norm_shape
        w = 1.0 + 0.5 * rng.normal(size=ns_shape)
        b = 0.3 * rng.normal(size=ns_shape)

        def call(x0=x0, norm_shape=norm_shape, eps=eps, affine=affine, w=w, b=b) -> object:
            layer = ns["LayerNorm"](norm_shape, eps, affine)
            if affine:
                layer.weight, layer.bias = w.copy(), b.copy()
            x = x0.copy()
            return layer.forward(x), x

        calls.append(call)
    return calls


# -- R-Drop: cross-entropy of two passes and their symmetric KL (Liang et al. 2021) -------------------------------

RD_HEAD = '''def log_softmax(logits):
    """Log-softmax over the last axis, shifted by the maximum."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


class RDropCriterion:
    """The R-Drop objective of two forward passes of one batch under different dropout masks; ``args`` is the
    parsed command line (``args.alpha``: the weight of the consistency term)."""

    def __init__(self, args):
        self.args = args

    def __call__(self, logits1, logits2, target, pad_mask=None):
'''
RD_BODY = '''        logp1 = log_softmax(logits1)
        logp2 = log_softmax(logits2)
        keep = np.ones(target.shape, dtype=bool) if pad_mask is None else ~pad_mask
        safe = np.where(keep, target, 0)
        nll1 = -np.take_along_axis(logp1, safe[..., None], axis=-1)[..., 0]
        nll2 = -np.take_along_axis(logp2, safe[..., None], axis=-1)[..., 0]
        kl = 0.5 * np.sum(np.exp(logp1) * (logp1 - logp2) + np.exp(logp2) * (logp2 - logp1), axis=-1)
        count = keep.sum()
        if count == 0:
            return 0.0
        ce = 0.5 * (nll1 + nll2)[keep].sum() / count
        consistency = kl[keep].sum() / count
        return float(ce + self.args.alpha * consistency)
'''
RD_DOC = '''        """The R-Drop loss of two passes' ``logits1`` and ``logits2`` (``(..., V)``, logits over V classes)
        against integer ``target`` (their shape without the last axis). ``pad_mask`` (``target``'s shape, True
        at padding; None: no padding) leaves positions out: their targets may be any integer (such as -100) and
        are not read. Over the kept positions: the cross-entropy is the mean of the two passes' negative log
        likelihoods, ``(nll1 + nll2) / 2``; the consistency term is the symmetric KL divergence of the two
        softmax distributions, ``(KL(p1 || p2) + KL(p2 || p1)) / 2`` summed over the classes. Both are averaged
        over the kept positions, and the loss is ``ce + self.args.alpha * kl`` as a float; 0.0 when every position
        is padding. Logits may be large: softmaxes are computed with the maximum shifted out."""
'''
RD_GOLDEN = "\n\n" + RD_HEAD + RD_DOC + RD_BODY
RD_DRIVER = '''"""Train a dropout MLP classifier with R-Drop regularisation: python train_rdrop.py [--alpha A]"""

import argparse

import numpy as np

from rdrop.criterion import RDropCriterion


def forward(rng, params, x, p_drop):
    w1, w2 = params
    h = np.maximum(x @ w1, 0.0)
    h = h * (rng.random(h.shape) >= p_drop) / (1.0 - p_drop)
    return h @ w2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--alpha", type=float, default=4.0)
    parser.add_argument("--dropout", type=float, default=0.3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    centres = 2.0 * rng.normal(size=(3, 5))
    params = [0.5 * rng.normal(size=(5, 12)), 0.5 * rng.normal(size=(12, 3))]
    criterion = RDropCriterion(args)
    for step in range(4):
        y = rng.integers(0, 3, size=16)
        x = centres[y] + rng.normal(size=(16, 5))
        logits1 = forward(rng, params, x, args.dropout)
        logits2 = forward(rng, params, x, args.dropout)
        loss = criterion(logits1, logits2, y)
        params[1] = params[1] * (1.0 - 0.01 * loss)
        print(f"step {step}: r-drop loss {loss:.4f}")


if __name__ == "__main__":
    main()
'''

_rd = editor(RD_HEAD, RD_BODY)

RD_WRONG = {
    "one direction of the KL": _rd(
        "kl = 0.5 * np.sum(np.exp(logp1) * (logp1 - logp2) + np.exp(logp2) * (logp2 - logp1), axis=-1)",
        "kl = np.sum(np.exp(logp1) * (logp1 - logp2), axis=-1)"),
    "symmetric KL not halved": _rd(
        "kl = 0.5 * np.sum(np.exp(logp1) * (logp1 - logp2) + np.exp(logp2) * (logp2 - logp1), axis=-1)",
        "kl = np.sum(np.exp(logp1) * (logp1 - logp2) + np.exp(logp2) * (logp2 - logp1), axis=-1)"),
    "KL averaged over the classes": _rd(
        "kl = 0.5 * np.sum(np.exp(logp1) * (logp1 - logp2) + np.exp(logp2) * (logp2 - logp1), axis=-1)",
        "kl = 0.5 * np.mean(np.exp(logp1) * (logp1 - logp2) + np.exp(logp2) * (logp2 - logp1), axis=-1)"),
    "padding mask ignored": _rd(
        "keep = np.ones(target.shape, dtype=bool) if pad_mask is None else ~pad_mask",
        "keep = np.ones(target.shape, dtype=bool)"),
    "mean over every position": _rd('''        ce = 0.5 * (nll1 + nll2)[keep].sum() / count
        consistency = kl[keep].sum() / count
''', '''        ce = 0.5 * (nll1 + nll2)[keep].sum() / keep.size
        consistency = kl[keep].sum() / keep.size
'''),
    "padded targets gathered": _rd("        safe = np.where(keep, target, 0)\n", "        safe = target\n"),
    "cross-entropy of the first pass only": _rd("ce = 0.5 * (nll1 + nll2)[keep].sum() / count",
                                                "ce = nll1[keep].sum() / count"),
    "softmax without the shift": _rd('''        logp1 = log_softmax(logits1)
        logp2 = log_softmax(logits2)
''', '''        logp1 = np.log(np.exp(logits1) / np.exp(logits1).sum(axis=-1, keepdims=True))
        logp2 = np.log(np.exp(logits2) / np.exp(logits2).sum(axis=-1, keepdims=True))
'''),
    "pins alpha": _rd("return float(ce + self.args.alpha * consistency)", "return float(ce + 4.0 * consistency)"),
}
RD_RIGHT = {
    "weighted by a float mask": RD_HEAD + '''        w = np.ones(target.shape)
        if pad_mask is not None:
            w = (~pad_mask).astype(float)
        total = w.sum()
        if total == 0:
            return 0.0
        a, b = log_softmax(logits1), log_softmax(logits2)
        idx = np.where(w > 0, target, 0)[..., None]
        ce = -(np.take_along_axis(a, idx, -1)[..., 0] + np.take_along_axis(b, idx, -1)[..., 0]) / 2.0
        kl = ((np.exp(a) - np.exp(b)) * (a - b)).sum(axis=-1) / 2.0
        return float((w * ce).sum() / total + self.args.alpha * (w * kl).sum() / total)
''',
    "position by position": RD_HEAD + '''        v = logits1.shape[-1]
        l1 = logits1.reshape(-1, v)
        l2 = logits2.reshape(-1, v)
        t = target.reshape(-1)
        pad = np.zeros(t.shape, dtype=bool) if pad_mask is None else pad_mask.reshape(-1)
        ces, kls = [], []
        for i in range(len(t)):
            if pad[i]:
                continue
            a = log_softmax(l1[i])
            b = log_softmax(l2[i])
            ces.append(-(a[t[i]] + b[t[i]]) / 2)
            kls.append((np.exp(a) @ (a - b) + np.exp(b) @ (b - a)) / 2)
        if not ces:
            return 0.0
        return float(np.mean(ces) + self.args.alpha * np.mean(kls))
''',
}


def rd_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general settings: classification and token batches, no mask, a padding mask whose targets are
    -100, a mask of padding only, large logits, several alphas."""
    rng = np.random.default_rng(73)
    calls = []
    for shape, v, alpha, scale, pad in (((6,), 4, 4.0, 1.0, None), ((3, 5), 7, 0.3, 2.0, "tail"),
                                        ((2, 4), 5, 1.0, 300.0, "tail"), ((5,), 3, 2.5, 1.5, "some"),
                                        ((2, 3), 4, 4.0, 1.0, "all"), ((4, 2), 6, 0.0, 0.5, None)):
        l1 = scale * rng.normal(size=shape + (v,))
        l2 = l1 + scale * 0.5 * rng.normal(size=shape + (v,))
        target = rng.integers(0, v, size=shape)
        if pad is None:
            mask = None
        elif pad == "all":
            mask = np.ones(shape, dtype=bool)
        elif pad == "tail":
            mask = np.zeros(shape, dtype=bool)
            mask[..., -2:] = True
            mask[0, -1] = False if len(shape) > 1 else mask[0, -1]
        else:
            mask = rng.random(shape) < 0.4
            mask[0] = False
        if mask is not None:
            target = np.where(mask, -100, target)

        def call(l1=l1, l2=l2, target=target, mask=mask, alpha=alpha) -> object:
            crit = ns["RDropCriterion"](SimpleNamespace(alpha=alpha, dropout=0.3))
            return crit(l1.copy(), l2.copy(), target.copy(), None if mask is None else mask.copy())

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "32-LayerNormLastAxes", "files": {"layers/__init__.py": "", "layers/norm.py":
     '"""Normalisation layers over numpy arrays."""\n\nimport numpy as np\n' + LN_GOLDEN, "run_block.py": LN_DRIVER},
     "function": "layers/norm.py::LayerNorm.forward", "command": "python run_block.py", "head": _NP,
     "wrong": LN_WRONG, "right": LN_RIGHT, "check": ln_check,
     "gaps": {"last axis only": ["normalized_shape", "x.ndim - k"],
              "every axis after the batch": ["normalized_shape", "x.ndim - k"],
              "unbiased variance": ["np.mean(centred ** 2, axis=axes, keepdims=True)"],
              "eps outside the square root": ["np.sqrt(var + self.eps)"], "pins eps": ["eps"],
              "affine flag ignored": ["elementwise_affine"],
              "shift before the scale": ["out * self.weight + self.bias"], "input centred in place": ["x - mean"]}},
    {"name": "33-RDropLoss", "files": {"rdrop/__init__.py": "", "rdrop/criterion.py":
     '"""R-Drop training objective."""\n\nimport numpy as np\n' + RD_GOLDEN, "train_rdrop.py": RD_DRIVER},
     "function": "rdrop/criterion.py::RDropCriterion.__call__", "command": "python train_rdrop.py", "head": _NP,
     "wrong": RD_WRONG, "right": RD_RIGHT, "check": rd_check,
     "gaps": {"one direction of the KL": ["np.exp(logp2) * (logp2 - logp1)"],
              "symmetric KL not halved": ["0.5 * np.sum("], "KL averaged over the classes": ["np.sum("],
              "padding mask ignored": ["pad_mask"], "mean over every position": ["count", "keep.sum()"],
              "padded targets gathered": ["np.where(keep, target, 0)"],
              "cross-entropy of the first pass only": ["nll2"],
              "softmax without the shift": ["log_softmax(logits1)"], "pins alpha": ["alpha"]}},
]
"""The seventh fresh held-out tasks."""
