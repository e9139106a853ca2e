"""A seventeenth held-out set for ``wrong_answers.py --set fresh16``: four numpy tasks of shapes that no other set
nor any test fixture has. The first is the additive angular margin loss of ArcFace (Deng et al. 2019) as a head's
method reading ``self.cfg.head``: cosines of the normalised embeddings and class centres, the target angle
widened by the margin, ``easy_margin``'s cut at a cosine of 0 or else the fall-back ``cos - sin(pi - m) * m`` past
``pi - m``, rows whose label is ``ignore_index`` left out, the scale and the mean cross-entropy; the driver learns
the centres on a toy encoder's embeddings with the default config (scale 64, margin 0.5, no easy margin), never
with ignored labels, zero embeddings, the easy margin nor target angles past ``pi - m``. The second is
sharpness-aware minimisation (Foret et al. 2021) over SGD with momentum, with the adaptive form of ASAM (Kwon et
al. 2021), a step that calls its closure twice: the ascent ``rho * t ** 2 * g / ||t * g||`` over all tensors
together, the weights restored exactly, the base step with weight decay and Nesterov momentum, tensors without
gradient left alone, and the weights and buffers changed in place; the driver trains a small classifier with the
default config (rho 0.05, momentum 0.9, no decay), never adaptive, with Nesterov, weight decay, a frozen tensor
nor a zero gradient. The third is the multi-step transitions of Rainbow (Hessel et al. 2018), called once per
environment step: pending one-step transitions in ``self.pending``, the n-step return, the bootstrap state, the
done flag and the discount ``gamma ** k`` of each, shorter ones handed out at an episode's end, truncation told
apart from termination, and rewards clipped by ``reward_clip``; the driver runs tabular Q-learning from a replay
of 3-step transitions on an MDP whose episodes end in terminal states, never truncated, nor with clipping. The
fourth is spectral normalisation (Miyato et al. 2018), called once per forward: the power iteration carried over
in ``self.u`` and ``self.v`` (overwritten in place while ``self.training``), the weight seen as a matrix along
``dim``, the eps of each normalisation, and the Lipschitz bound ``coeff`` of invertible ResNets (Behrmann et al.
2019); the driver trains a spectrally normalised two-layer classifier with one iteration on 2-D weights, never
in eval mode, with another ``dim``, more iterations, ``coeff`` nor a zero weight. Written before its first run,
and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

# -- ArcFace's additive angular margin (Deng et al. 2019) ---------------------------------------------------------

AF_HEAD = '''class ArcFaceHead:
    """The classification head of ArcFace ("ArcFace: Additive Angular Margin Loss for Deep Face Recognition"):
    class centres ``self.weight`` (C, dim) compared with the embeddings by cosine, the angle to each embedding's
    own centre widened by an additive margin before the scaled softmax. Settings in ``self.cfg.head``."""

    def __init__(self, cfg, num_classes, dim, seed=0):
        self.cfg = cfg
        rng = np.random.default_rng(seed)
        self.weight = rng.normal(scale=0.01, size=(num_classes, dim))

    def forward(self, embeddings, labels):
'''
AF_BODY = '''        c = self.cfg.head
        x = np.asarray(embeddings, dtype=np.float64)
        labels = np.asarray(labels).reshape(-1)
        num_classes = self.weight.shape[0]
        if x.ndim != 2 or x.shape[0] != labels.size or x.shape[1] != self.weight.shape[1]:
            raise ValueError(f"embeddings of shape {x.shape} for {labels.size} labels")
        counted = labels != c.ignore_index
        if np.any((labels[counted] < 0) | (labels[counted] >= num_classes)):
            raise ValueError("label out of range")
        x_hat = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        w_hat = self.weight / np.maximum(np.linalg.norm(self.weight, axis=1, keepdims=True), 1e-12)
        cosine = np.clip(x_hat @ w_hat.T, -1.0, 1.0)
        sine = np.sqrt(1.0 - cosine ** 2)
        phi = cosine * math.cos(c.margin) - sine * math.sin(c.margin)
        if c.easy_margin:
            phi = np.where(cosine > 0.0, phi, cosine)
        else:
            th = math.cos(math.pi - c.margin)
            mm = math.sin(math.pi - c.margin) * c.margin
            phi = np.where(cosine > th, phi, cosine - mm)
        rows = np.nonzero(counted)[0]
        target = np.zeros(cosine.shape, dtype=bool)
        target[rows, labels[rows]] = True
        logits = c.scale * np.where(target, phi, cosine)
        if rows.size == 0:
            return 0.0, logits
        picked = logits[rows]
        top = picked.max(axis=1, keepdims=True)
        log_z = top[:, 0] + np.log(np.exp(picked - top).sum(axis=1))
        loss = float(np.mean(log_z - picked[np.arange(rows.size), labels[rows]]))
        return loss, logits
'''
AF_DOC = '''        """The ArcFace loss of a batch of embeddings, and its logits.

        ``embeddings``: a float array (N, dim), dim the centres'; ``labels``: ints (N,), each a class in [0, C) or
        ``ignore_index``; else ValueError (shapes that do not match, a label out of range). Settings, read from
        ``self.cfg.head``: ``scale`` s, ``margin`` m (radians), ``easy_margin`` and ``ignore_index``.

        The embeddings and the rows of ``self.weight`` are each divided by their Euclidean norm, taken as at least
        1e-12; each cosine ``cos = x_hat . w_hat`` is clipped to [-1, 1]. The target logit of a row whose label
        is not ``ignore_index`` (a counted row) is ``cos(theta + m) = cos * cos(m) - sin(theta) * sin(m)``, with
        ``sin(theta) = sqrt(1 - cos ** 2)``, where ``cos > 0`` with ``easy_margin``, or else where ``cos > cos(pi
        - m)``; elsewhere the target logit is ``cos`` with ``easy_margin``, and ``cos - sin(pi - m) * m``
        without. Every other logit (every one of a row not counted) is ``cos``. All are multiplied by s.

        The loss is the mean, over the counted rows, of the cross-entropy of the logits with the label (the
        log-sum-exp of the row less its target logit, computed stably); 0.0 when no row counts.

        Returns ``(loss, logits)``: a float and a float64 array (N, C). Neither argument nor ``self.weight`` is
        changed.
        """
'''
AF_GOLDEN = "\n\n" + AF_HEAD + AF_DOC + AF_BODY
AF_CONFIG = '''"""Experiment configuration."""

from dataclasses import dataclass, field


@dataclass
class HeadConfig:
    scale: float = 64.0
    margin: float = 0.5
    easy_margin: bool = False
    ignore_index: int = -1


@dataclass
class TrainConfig:
    inputs: int = 10
    dim: int = 16
    classes: int = 8
    batch_size: int = 32
    steps: int = 200
    lr: float = 0.002
    head: HeadConfig = field(default_factory=HeadConfig)
'''
AF_DRIVER = '''"""Learn the class centres of an ArcFace head on the embeddings of a fixed toy encoder:
python train_arcface.py"""

import numpy as np

from facerec.config import TrainConfig
from facerec.heads import ArcFaceHead


def main():
    rng = np.random.default_rng(0)
    cfg = TrainConfig()
    means = 1.5 * rng.normal(size=(cfg.classes, cfg.inputs))
    encoder = rng.normal(size=(cfg.inputs, cfg.dim)) / np.sqrt(cfg.inputs)
    head = ArcFaceHead(cfg, cfg.classes, cfg.dim)
    rows = np.arange(cfg.batch_size)
    for step in range(1, cfg.steps + 1):
        labels = rng.integers(0, cfg.classes, size=cfg.batch_size)
        x = means[labels] + rng.normal(size=(cfg.batch_size, cfg.inputs))
        emb = np.tanh(x @ encoder)
        loss, logits = head.forward(emb, labels)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        probs[rows, labels] -= 1.0
        grad_cos = cfg.head.scale * probs / cfg.batch_size  # the margin's own slope left out
        norms = np.linalg.norm(head.weight, axis=1, keepdims=True)
        w_hat = head.weight / norms
        x_hat = emb / np.linalg.norm(emb, axis=1, keepdims=True)
        cos = x_hat @ w_hat.T
        grad_w_hat = grad_cos.T @ x_hat - (grad_cos * cos).sum(axis=0)[:, None] * w_hat
        head.weight -= cfg.lr * grad_w_hat / norms
        if step % 25 == 0:
            accuracy = float(np.mean(np.argmax(cos, axis=1) == labels))
            print(f"step {step}: loss {loss:.4f}, accuracy {accuracy:.3f}, "
                  f"mean target cosine {float(np.mean(cos[rows, labels])):.4f}")


if __name__ == "__main__":
    main()
'''

_af = editor(AF_HEAD, AF_BODY)
_AF_MARGIN = '''        if c.easy_margin:
            phi = np.where(cosine > 0.0, phi, cosine)
        else:
            th = math.cos(math.pi - c.margin)
            mm = math.sin(math.pi - c.margin) * c.margin
            phi = np.where(cosine > th, phi, cosine - mm)
'''

AF_WRONG = {
    "pins scale": _af("logits = c.scale * np.where(target, phi, cosine)",
                      "logits = 64.0 * np.where(target, phi, cosine)"),
    "easy_margin ignored": _af(_AF_MARGIN, '''        th = math.cos(math.pi - c.margin)
        mm = math.sin(math.pi - c.margin) * c.margin
        phi = np.where(cosine > th, phi, cosine - mm)
'''),
    "no fall-back past pi - m": _af(_AF_MARGIN, '''        if c.easy_margin:
            phi = np.where(cosine > 0.0, phi, cosine)
'''),
    "fall-back without the margin factor": _af("mm = math.sin(math.pi - c.margin) * c.margin",
                                               "mm = math.sin(math.pi - c.margin)"),
    "easy margin kept at a cosine of zero": _af("np.where(cosine > 0.0, phi, cosine)",
                                                "np.where(cosine >= 0.0, phi, cosine)"),
    "zero embeddings unguarded": _af("x_hat = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)",
                                     "x_hat = x / np.linalg.norm(x, axis=1, keepdims=True)"),
    "ignore_index not honoured": _af("rows = np.nonzero(counted)[0]", "rows = np.arange(labels.size)"),
    "margin on every class": _af("logits = c.scale * np.where(target, phi, cosine)", "logits = c.scale * phi"),
    "centres not normalised": _af(
        "w_hat = self.weight / np.maximum(np.linalg.norm(self.weight, axis=1, keepdims=True), 1e-12)",
        "w_hat = self.weight"),
    "loss summed over the batch": _af("loss = float(np.mean(log_z - picked[np.arange(rows.size), labels[rows]]))",
                                      "loss = float(np.sum(log_z - picked[np.arange(rows.size), labels[rows]]))"),
}
AF_RIGHT = {
    "angles by acos, row by row": AF_HEAD + '''        import math as m

        cfg = self.cfg.head
        X = np.array(embeddings, dtype=float)
        y = [int(v) for v in np.asarray(labels).ravel()]
        C, D = self.weight.shape
        if X.ndim != 2 or len(X) != len(y) or X.shape[1] != D:
            raise ValueError("shape mismatch")
        for lab in y:
            if lab != cfg.ignore_index and not 0 <= lab < C:
                raise ValueError("bad label")

        def unit(a):
            return a / max(m.sqrt(float(np.dot(a, a))), 1e-12)

        centres = [unit(w) for w in self.weight]
        lower = m.cos(m.pi - cfg.margin)
        shift = m.sin(m.pi - cfg.margin) * cfg.margin
        logits = np.zeros((len(y), C))
        total, count = 0.0, 0
        for i in range(len(y)):
            xu = unit(X[i])
            for j in range(C):
                cs = min(1.0, max(-1.0, float(np.dot(xu, centres[j]))))
                val = cs
                if y[i] != cfg.ignore_index and j == y[i]:
                    widened = m.cos(m.acos(cs) + cfg.margin)
                    if cfg.easy_margin:
                        val = widened if cs > 0 else cs
                    else:
                        val = widened if cs > lower else cs - shift
                logits[i, j] = cfg.scale * val
            if y[i] != cfg.ignore_index:
                row = [float(v) for v in logits[i]]
                top = max(row)
                lse = top + m.log(sum(m.exp(v - top) for v in row))
                total += lse - row[y[i]]
                count += 1
        return (total / count if count else 0.0), logits
''',
    "one-hot blend, logaddexp": AF_HEAD + '''        hc = self.cfg.head
        emb = np.asarray(embeddings, dtype=np.float64)
        lab = np.asarray(labels).ravel()
        if emb.ndim != 2 or emb.shape != (lab.shape[0], self.weight.shape[1]):
            raise ValueError("embeddings do not match the labels or the centres")
        keep = lab != hc.ignore_index
        if ((lab < 0) | (lab >= self.weight.shape[0]))[keep].any():
            raise ValueError("label out of range")

        def l2n(a):
            return a / np.clip(np.sqrt((a * a).sum(axis=-1, keepdims=True)), 1e-12, None)

        cos = np.clip(np.einsum("nd,cd->nc", l2n(emb), l2n(self.weight)), -1.0, 1.0)
        mg = hc.margin
        widened = np.cos(np.arccos(cos) + mg)
        if hc.easy_margin:
            target_cos = np.where(cos > 0, widened, cos)
        else:
            target_cos = np.where(cos > np.cos(np.pi - mg), widened, cos - mg * np.sin(np.pi - mg))
        onehot = np.zeros_like(cos)
        idx = np.flatnonzero(keep)
        onehot[idx, lab[idx]] = 1.0
        logits = hc.scale * (onehot * target_cos + (1.0 - onehot) * cos)
        logp = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
        n = int(keep.sum())
        loss = float(-(onehot * logp).sum() / n) if n else 0.0
        return loss, logits
''',
}


def af_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general batches: the default config; another scale and margin; the easy margin on random
    embeddings and on embeddings at right angles to their centres; target angles past ``pi - m`` with the margin
    of the driver and a wider one; rows whose label is the ignore index, and a batch of them only; another ignore
    index; a zero embedding; centres of very different norms; a label out of range and a shape that does not
    match. Each gives the loss, the logits, and the embeddings and centres as the caller holds them afterwards."""
    rng = np.random.default_rng(164)

    def config(scale=64.0, margin=0.5, easy_margin=False, ignore_index=-1):
        return SimpleNamespace(head=SimpleNamespace(scale=scale, margin=margin, easy_margin=easy_margin,
                                                    ignore_index=ignore_index))

    centres = rng.normal(size=(4, 5))
    plain = rng.normal(size=(7, 5))
    plain_labels = rng.integers(0, 4, size=7)
    axes = np.eye(4, 5)
    axis_embeddings = np.array([axes[1], axes[2], 2.0 * axes[0], axes[3], axes[0] + axes[1]])
    axis_labels = np.array([0, 3, 1, 2, 0])
    away_labels = np.array([0, 1, 2, 3, 1, 0])
    away = -centres[away_labels] + 0.15 * rng.normal(size=(6, 5))
    away[4] = rng.normal(size=5)
    zero = plain.copy()
    zero[2] = 0.0
    uneven = centres * np.array([[0.01], [1.0], [30.0], [0.5]])
    cases = [
        (config(), centres, plain, plain_labels),
        (config(scale=30.0, margin=0.35), centres, plain, plain_labels),
        (config(easy_margin=True), centres, plain, plain_labels),
        (config(scale=16.0, easy_margin=True), axes, axis_embeddings, axis_labels),
        (config(), axes, axis_embeddings, axis_labels),
        (config(), centres, away, away_labels),
        (config(scale=10.0, margin=0.8), centres, away, away_labels),
        (config(scale=20.0, margin=0.3, easy_margin=True), centres, away, away_labels),
        (config(), centres, plain, np.array([2, -1, 0, -1, 3, 1, -1])),
        (config(), centres, plain[:3], np.array([-1, -1, -1])),
        (config(ignore_index=-100), centres, plain[:4], np.array([1, -100, 3, 0])),
        (config(), centres, zero, plain_labels),
        (config(scale=8.0), uneven, plain, plain_labels),
        (config(), centres, plain[:3], np.array([0, 4, 1])),
        (config(ignore_index=-100), centres, plain[:3], np.array([0, -1, 1])),
        (config(), centres, plain[:3], np.array([0, 1])),
    ]
    calls: list[Callable[[], object]] = []
    for cfg, weight, emb, labels in cases:

        def call(cfg=cfg, weight=weight, emb=emb, labels=labels) -> object:
            head = ns["ArcFaceHead"](cfg, weight.shape[0], weight.shape[1])
            head.weight = weight.copy()
            held = emb.copy()
            held_labels = labels.copy()
            out = head.forward(held, held_labels)
            return out, held, held_labels, head.weight

        calls.append(call)
    return calls


# -- Sharpness-aware minimisation (Foret et al. 2021) and ASAM (Kwon et al. 2021) ---------------------------------

SA_HEAD = '''class SAM:
    """Sharpness-aware minimisation ("Sharpness-Aware Minimization for Efficiently Improving Generalization") over
    SGD with momentum, with the adaptive form of ASAM ("ASAM: Adaptive Sharpness-Aware Minimization for
    Scale-Invariant Learning of Deep Neural Networks"). ``self.params`` maps names to the model's own arrays,
    which a step changes in place; ``self.state[name]["momentum_buffer"]`` holds each one's momentum. Settings in
    ``self.cfg.optim``."""

    def __init__(self, params, cfg):
        self.params = params
        self.cfg = cfg
        self.state = {name: {"momentum_buffer": np.zeros_like(p)} for name, p in params.items()}
        self.steps = 0

    def step(self, closure):
'''
SA_BODY = '''        c = self.cfg.optim
        if c.rho < 0.0:
            raise ValueError(f"rho must be non-negative, got {c.rho}")
        loss, grads = closure()
        names = [name for name in self.params if grads.get(name) is not None]
        if c.adaptive:
            scaled = [np.abs(self.params[name]) * grads[name] for name in names]
        else:
            scaled = [grads[name] for name in names]
        grad_norm = float(np.sqrt(sum(float(np.sum(g * g)) for g in scaled)))
        scale = c.rho / (grad_norm + 1e-12)
        old = {}
        for name in names:
            p = self.params[name]
            old[name] = p.copy()
            e_w = (p * p if c.adaptive else 1.0) * grads[name] * scale
            p += e_w
        _, grads = closure()
        for name in names:
            p = self.params[name]
            p[...] = old[name]
            g = grads[name]
            if c.weight_decay != 0.0:
                g = g + c.weight_decay * p
            buf = self.state[name]["momentum_buffer"]
            buf *= c.momentum
            buf += g
            if c.nesterov:
                g = g + c.momentum * buf
            else:
                g = buf
            p -= c.lr * g
        self.steps += 1
        return loss
'''
SA_DOC = '''        """One step of SAM: an ascent to the sharpest weights nearby, the gradient there, then a step of
        SGD with momentum from the weights as they were; called once per training step.

        ``closure``: called with no argument, it returns ``(loss, grads)`` at the weights ``self.params`` holds
        at the time: a float and a dict of gradient arrays by name, in which a tensor without gradient is missing
        or None. It is called twice. Settings, read from ``self.cfg.optim``: ``rho`` (>= 0, else ValueError before
        the closure is called), ``adaptive``, ``lr``, ``momentum``, ``weight_decay`` and ``nesterov``.

        Only the tensors with a gradient in the first call take part. With g their first gradients and ``t = |w|``
        when ``adaptive`` (else 1), each one's perturbation is ``e = t ** 2 * g * rho / (||t * g|| + 1e-12)``, the
        norm taken over all of them together; each w becomes w + e and the closure is called again. Each w is
        then restored to its exact value before the ascent and, with g' its second gradient, ``d = g' +
        weight_decay * w``, its buffer ``b = momentum * b + d``, and ``w -= lr * (d + momentum * b)`` with
        ``nesterov``, else ``w -= lr * b``. The arrays of ``self.params`` and the buffers are changed in place (the
        arrays themselves); ``self.steps`` rises by one.

        Returns the loss of the first call.
        """
'''
SA_GOLDEN = "\n\n" + SA_HEAD + SA_DOC + SA_BODY
SA_CONFIG = '''"""Experiment configuration."""

from dataclasses import dataclass, field


@dataclass
class OptimConfig:
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 0.0
    nesterov: bool = False
    rho: float = 0.05
    adaptive: bool = False


@dataclass
class TrainConfig:
    inputs: int = 6
    hidden: int = 16
    samples: int = 512
    batch_size: int = 32
    steps: int = 300
    optim: OptimConfig = field(default_factory=OptimConfig)
'''
SA_DRIVER = '''"""Train a small classifier with sharpness-aware minimisation over SGD with momentum:
python train_sam.py"""

import numpy as np

from flatmin.config import TrainConfig
from flatmin.sam import SAM


def loss_and_grads(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    logit = (h @ params["w2"] + params["b2"])[:, 0]
    loss = float(np.mean(np.logaddexp(0.0, logit) - y * logit))
    d_logit = (1.0 / (1.0 + np.exp(-logit)) - y)[:, None] / len(y)
    d_pre = (d_logit @ params["w2"].T) * (1.0 - h * h)
    grads = {"w1": x.T @ d_pre, "b1": d_pre.sum(axis=0), "w2": h.T @ d_logit, "b2": d_logit.sum(axis=0)}
    return loss, grads


def main():
    rng = np.random.default_rng(0)
    cfg = TrainConfig()
    x = rng.normal(size=(cfg.samples, cfg.inputs))
    y = ((np.sin(2.0 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=cfg.samples)) > 0).astype(float)
    params = {"w1": rng.normal(scale=0.5, size=(cfg.inputs, cfg.hidden)), "b1": np.zeros(cfg.hidden),
              "w2": rng.normal(scale=0.5, size=(cfg.hidden, 1)), "b2": np.zeros(1)}
    optimizer = SAM(params, cfg)
    for step in range(1, cfg.steps + 1):
        idx = rng.choice(cfg.samples, size=cfg.batch_size, replace=False)

        def closure(idx=idx):
            return loss_and_grads(params, x[idx], y[idx])

        loss = optimizer.step(closure)
        if step % 50 == 0:
            full, _ = loss_and_grads(params, x, y)
            h = np.tanh(x @ params["w1"] + params["b1"])
            accuracy = float(np.mean(((h @ params["w2"] + params["b2"])[:, 0] > 0) == (y > 0.5)))
            print(f"step {step}: batch loss {loss:.4f}, full loss {full:.4f}, accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
'''

_sa = editor(SA_HEAD, SA_BODY)
_SA_SCALED = '''        if c.adaptive:
            scaled = [np.abs(self.params[name]) * grads[name] for name in names]
        else:
            scaled = [grads[name] for name in names]
'''
_SA_ASCENT = _SA_SCALED + '''        grad_norm = float(np.sqrt(sum(float(np.sum(g * g)) for g in scaled)))
        scale = c.rho / (grad_norm + 1e-12)
        old = {}
        for name in names:
            p = self.params[name]
            old[name] = p.copy()
            e_w = (p * p if c.adaptive else 1.0) * grads[name] * scale
'''

SA_WRONG = {
    "pins rho": _sa("scale = c.rho / (grad_norm + 1e-12)", "scale = 0.05 / (grad_norm + 1e-12)"),
    "adaptive norm of the plain gradient": _sa(_SA_SCALED, "        scaled = [grads[name] for name in names]\n"),
    "adaptive ascent scaled by |w|": _sa("e_w = (p * p if c.adaptive else 1.0) * grads[name] * scale",
                                         "e_w = (np.abs(p) if c.adaptive else 1.0) * grads[name] * scale"),
    "weight decay ignored": _sa('''            if c.weight_decay != 0.0:
                g = g + c.weight_decay * p
''', ""),
    "nesterov ignored": _sa('''            if c.nesterov:
                g = g + c.momentum * buf
            else:
                g = buf
''', "            g = buf\n"),
    "tensors without gradient not skipped": _sa(
        "names = [name for name in self.params if grads.get(name) is not None]", "names = list(self.params)"),
    "no eps in the ascent's norm": _sa("scale = c.rho / (grad_norm + 1e-12)", "scale = c.rho / grad_norm"),
    "base step with the first gradient": _sa("        _, grads = closure()\n", "        closure()\n"),
    "weights not restored": _sa("            p[...] = old[name]\n", ""),
    "ascent normalised per tensor": _sa(_SA_ASCENT, '''        old = {}
        for name in names:
            p = self.params[name]
            old[name] = p.copy()
            t = np.abs(p) if c.adaptive else 1.0
            scale = c.rho / (float(np.linalg.norm(t * grads[name])) + 1e-12)
            e_w = (p * p if c.adaptive else 1.0) * grads[name] * scale
'''),
}
SA_RIGHT = {
    "one flat vector": SA_HEAD + '''        opt = self.cfg.optim
        if opt.rho < 0:
            raise ValueError("rho must be >= 0")
        loss, first = closure()
        keys = [k for k in self.params if first.get(k) is not None]
        if keys:
            w_flat = np.concatenate([self.params[k].ravel() for k in keys])
            g_flat = np.concatenate([np.asarray(first[k], dtype=float).ravel() for k in keys])
        else:
            w_flat = g_flat = np.zeros(0)
        t = np.abs(w_flat) if opt.adaptive else np.ones_like(w_flat)
        e_flat = t * t * g_flat * (opt.rho / (np.linalg.norm(t * g_flat) + 1e-12))
        saved = {k: self.params[k].copy() for k in keys}
        pos = 0
        for k in keys:
            size = self.params[k].size
            self.params[k] += e_flat[pos:pos + size].reshape(self.params[k].shape)
            pos += size
        second = closure()[1]
        for k in keys:
            w = self.params[k]
            np.copyto(w, saved[k])
            d = np.asarray(second[k], dtype=float) + opt.weight_decay * w
            b = self.state[k]["momentum_buffer"]
            b[...] = opt.momentum * b + d
            w -= opt.lr * ((d + opt.momentum * b) if opt.nesterov else b)
        self.steps += 1
        return loss
''',
    "math norm, ufuncs with out=": SA_HEAD + '''        import math

        o = self.cfg.optim
        if not o.rho >= 0:
            raise ValueError("negative rho")
        loss, first = closure()
        live = {}
        for name in self.params:
            g = first.get(name)
            if g is not None:
                live[name] = np.asarray(g, dtype=np.float64)
        sq = 0.0
        for name, g in live.items():
            tg = np.abs(self.params[name]) * g if o.adaptive else g
            sq += float(np.vdot(tg, tg))
        coef = o.rho / (math.sqrt(sq) + 1e-12)
        backup = {}
        for name, g in live.items():
            w = self.params[name]
            backup[name] = np.array(w, copy=True)
            w += (np.square(w) * g if o.adaptive else g) * coef
        _, second = closure()
        for name in live:
            w = self.params[name]
            w[...] = backup[name]
            d = second[name]
            if o.weight_decay:
                d = d + o.weight_decay * w
            buf = self.state[name]["momentum_buffer"]
            np.multiply(buf, o.momentum, out=buf)
            np.add(buf, d, out=buf)
            direction = d + o.momentum * buf if o.nesterov else buf
            np.subtract(w, o.lr * direction, out=w)
        self.steps = self.steps + 1
        return loss
''',
}


def sa_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a few steps on a small regression model whose closure reads the caller's arrays: the default
    config; another rho, lr and momentum; the adaptive form; weight decay; Nesterov momentum; a frozen tensor
    whose gradient is None, and one missing from the gradients; a closure at a flat point (zero gradients), then
    off it; a rho of 0; a negative rho. Each gives, after every step, the loss returned, the weights, the
    buffers and the step count; at the end, the arrays the caller holds."""
    rng = np.random.default_rng(165)
    x = rng.normal(size=(9, 3))
    y = rng.normal(size=(9, 2))

    def config(lr=0.1, momentum=0.9, weight_decay=0.0, nesterov=False, rho=0.05, adaptive=False):
        return SimpleNamespace(optim=SimpleNamespace(lr=lr, momentum=momentum, weight_decay=weight_decay,
                                                     nesterov=nesterov, rho=rho, adaptive=adaptive))

    def closure_of(params, frozen, flat_steps):
        count = [0]

        def closure():
            count[0] += 1
            if count[0] <= 2 * flat_steps:
                return 1.0, {name: np.zeros_like(p) for name, p in params.items()}
            h = np.tanh(x @ params["w"])
            out = h @ params["v"] + params["b"]
            diff = out - y
            loss = float(np.mean(diff ** 2)) + 0.05 * float(np.sum(params["e"] ** 2))
            d_out = 2.0 * diff / diff.size
            d_pre = (d_out @ params["v"].T) * (1.0 - h * h)
            grads = {"w": x.T @ d_pre, "v": h.T @ d_out, "b": d_out.sum(axis=0), "e": 0.1 * params["e"]}
            if frozen == "none":
                grads["e"] = None
            elif frozen == "missing":
                del grads["e"]
            return loss, grads

        return closure

    calls: list[Callable[[], object]] = []
    for seed, cfg, steps, frozen, flat_steps in (
            (1, config(), 3, "", 0),
            (2, config(rho=0.2, lr=0.05, momentum=0.5), 3, "", 0),
            (3, config(rho=0.5, adaptive=True), 3, "", 0),
            (4, config(rho=0.3, adaptive=True, momentum=0.0, lr=0.2), 2, "", 0),
            (5, config(weight_decay=0.05), 3, "", 0),
            (6, config(nesterov=True, momentum=0.8), 3, "", 0),
            (7, config(), 2, "none", 0),
            (8, config(rho=0.1, adaptive=True), 2, "missing", 0),
            (9, config(), 3, "", 1),
            (10, config(rho=0.0), 2, "", 0),
            (11, config(rho=-0.05), 1, "", 0)):

        def call(seed=seed, cfg=cfg, steps=steps, frozen=frozen, flat_steps=flat_steps) -> object:
            draw = np.random.default_rng(160 + seed)
            params = {"w": draw.normal(size=(3, 4)), "v": draw.normal(size=(4, 2)), "b": draw.normal(size=2),
                      "e": draw.normal(size=3)}
            held = dict(params)
            optimizer = ns["SAM"](params, cfg)
            closure = closure_of(params, frozen, flat_steps)
            trace: list[object] = []
            for _ in range(steps):
                try:
                    loss = optimizer.step(closure)
                except (ValueError, TypeError, KeyError, ZeroDivisionError) as exc:
                    trace.append(type(exc).__name__)
                    break
                trace.append((loss, [params[k].copy() for k in held],
                              [optimizer.state[k]["momentum_buffer"].copy() for k in held], optimizer.steps))
            trace.append([held[k].copy() for k in held])
            return trace

        calls.append(call)
    return calls


# -- Multi-step transitions of Rainbow (Hessel et al. 2018) -------------------------------------------------------

NS_HEAD = '''class NStepTransitions:
    """Multi-step returns for replay, as in Rainbow ("Rainbow: Combining Improvements in Deep Reinforcement
    Learning"): one-step transitions pushed in order of time wait in ``self.pending`` (a list, oldest first)
    until their n-step transitions ``(state, action, ret, next_state, done, discount)`` are complete, for the
    targets ``ret + discount * (1 - done) * max_a Q(next_state, a)``. Settings in ``self.cfg.replay``."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.pending = []

    def push(self, state, action, reward, next_state, terminated, truncated=False):
'''
NS_BODY = '''        c = self.cfg.replay
        if c.n_step < 1:
            raise ValueError(f"n_step must be at least 1, got {c.n_step}")
        r = float(reward)
        if c.reward_clip is not None:
            r = min(max(r, -c.reward_clip), c.reward_clip)
        self.pending.append((state, action, r, next_state, bool(terminated)))
        episode_over = bool(terminated or truncated)
        completed = []
        while self.pending and (episode_over or len(self.pending) >= c.n_step):
            k = min(c.n_step, len(self.pending))
            ret = 0.0
            for i in range(k):
                ret += c.gamma ** i * self.pending[i][2]
            first_state, first_action = self.pending[0][0], self.pending[0][1]
            last_next, last_done = self.pending[k - 1][3], self.pending[k - 1][4]
            completed.append((first_state, first_action, ret, last_next, last_done, c.gamma ** k))
            self.pending.pop(0)
        return completed
'''
NS_DOC = '''        """Add one transition; return the n-step transitions it completes. Called once per environment step.

        ``state``, ``action``, ``next_state``: anything, kept as given; ``reward``: a float; ``terminated``: the
        episode ended in a terminal state (nothing to bootstrap from); ``truncated``: the episode was cut short
        (by a time limit), its last state still worth bootstrapping from. Settings, read from
        ``self.cfg.replay``: ``n_step`` (>= 1, else ValueError before anything changes), ``gamma`` and
        ``reward_clip`` (None, or c > 0: each reward clipped to [-c, c] as it comes in).

        The transition joins the end of ``self.pending`` (the list itself). While it holds at least ``n_step``
        transitions, or at all when this one ends the episode (``terminated`` or ``truncated``), its oldest
        transition is completed and removed: over the k = min(n_step, len(pending)) oldest pending transitions,
        ``ret = sum_i gamma ** i * r_i`` (i from 0), ``next_state`` and ``done`` (its ``terminated``) are those
        of the k-th, and ``discount = gamma ** k``. So at an episode's end every pending transition is handed
        out, the last ones with fewer than n rewards, and ``self.pending`` is left empty.

        Returns the completed transitions, oldest first: a list of tuples ``(state, action, ret, next_state,
        done, discount)``, ret and discount floats and done a bool.
        """
'''
NS_GOLDEN = "\n\n" + NS_HEAD + NS_DOC + NS_BODY
NS_CONFIG = '''"""Experiment configuration."""

from dataclasses import dataclass, field


@dataclass
class ReplayConfig:
    capacity: int = 5000
    n_step: int = 3
    gamma: float = 0.99
    reward_clip: float | None = None


@dataclass
class TrainConfig:
    states: int = 20
    actions: int = 3
    steps: int = 3000
    batch_size: int = 16
    lr: float = 0.1
    replay: ReplayConfig = field(default_factory=ReplayConfig)
'''
NS_DRIVER = '''"""Tabular Q-learning on a random MDP whose episodes end in terminal states, learning from a replay of
multi-step transitions as Rainbow does: python train_nstep.py"""

import numpy as np

from multistep.config import TrainConfig
from multistep.nstep import NStepTransitions


def main():
    rng = np.random.default_rng(0)
    cfg = TrainConfig()
    next_state = rng.integers(0, cfg.states, size=(cfg.states, cfg.actions))
    reward = rng.normal(size=(cfg.states, cfg.actions))
    terminal = rng.random(cfg.states) < 0.2
    terminal[0] = False
    starts = np.flatnonzero(~terminal)
    q = np.zeros((cfg.states, cfg.actions))
    nstep = NStepTransitions(cfg)
    replay = []
    state = 0
    episodes, episode_return, returns = 0, 0.0, []
    for step in range(1, cfg.steps + 1):
        explore = max(0.05, 1.0 - step / 1000)
        action = int(rng.integers(cfg.actions)) if rng.random() < explore else int(np.argmax(q[state]))
        following = int(next_state[state, action])
        r = float(reward[state, action] + 0.1 * rng.normal())
        done = bool(terminal[following] or rng.random() < 0.05)
        episode_return += r
        for item in nstep.push(state, action, r, following, done):
            replay.append(item)
            if len(replay) > cfg.replay.capacity:
                replay.pop(0)
        if done:
            episodes += 1
            returns.append(episode_return)
            episode_return = 0.0
            state = int(rng.choice(starts))
        else:
            state = following
        if len(replay) >= cfg.batch_size:
            for i in rng.integers(0, len(replay), size=cfg.batch_size):
                s, a, ret, s_next, d, discount = replay[i]
                target = ret + (0.0 if d else discount * q[s_next].max())
                q[s, a] += cfg.lr * (target - q[s, a])
        if step % 500 == 0:
            recent = float(np.mean(returns[-20:])) if returns else 0.0
            print(f"step {step}: episodes {episodes}, recent return {recent:.3f}, replay {len(replay)}, "
                  f"mean max Q {float(q.max(axis=1).mean()):.4f}")


if __name__ == "__main__":
    main()
'''

_ns = editor(NS_HEAD, NS_BODY)

NS_WRONG = {
    "pins gamma": NS_HEAD + NS_BODY.replace("c.gamma", "0.99"),
    "truncation ignored": _ns("episode_over = bool(terminated or truncated)", "episode_over = bool(terminated)"),
    "truncation stored as terminal": _ns("self.pending.append((state, action, r, next_state, bool(terminated)))",
                                         "self.pending.append((state, action, r, next_state, "
                                         "bool(terminated or truncated)))"),
    "reward_clip ignored": _ns('''        if c.reward_clip is not None:
            r = min(max(r, -c.reward_clip), c.reward_clip)
''', ""),
    "rewards clipped to their sign": _ns("r = min(max(r, -c.reward_clip), c.reward_clip)", "r = float(np.sign(r))"),
    "discount of n steps for every transition": _ns("c.gamma ** k))", "c.gamma ** c.n_step))"),
    "only the oldest handed out at the end": _ns('''            self.pending.pop(0)
''', '''            self.pending.pop(0)
            if episode_over:
                self.pending.clear()
'''),
    "handed out a step late": _ns("len(self.pending) >= c.n_step", "len(self.pending) > c.n_step"),
    "undiscounted return": _ns("ret += c.gamma ** i * self.pending[i][2]", "ret += self.pending[i][2]"),
    "discount one power short": _ns("c.gamma ** k))", "c.gamma ** (k - 1)))"),
}
NS_RIGHT = {
    "Horner's rule backwards": NS_HEAD + '''        import math

        cfg = self.cfg.replay
        n = int(cfg.n_step)
        if n < 1:
            raise ValueError("n_step")
        r = float(reward)
        clip = cfg.reward_clip
        if clip is not None:
            r = max(-clip, min(clip, r))
        self.pending.append((state, action, r, next_state, bool(terminated)))
        flush = terminated or truncated
        out = []
        while len(self.pending) >= (1 if flush else n):
            window = self.pending[:n]
            ret = 0.0
            for item in reversed(window):
                ret = item[2] + cfg.gamma * ret
            s0, a0 = window[0][:2]
            out.append((s0, a0, ret, window[-1][3], window[-1][4], math.pow(cfg.gamma, len(window))))
            del self.pending[0]
        return out
''',
    "powers as an array, one cut": NS_HEAD + '''        rc = self.cfg.replay
        if rc.n_step < 1:
            raise ValueError("n_step must be >= 1")
        if rc.reward_clip is None:
            rew = float(reward)
        else:
            rew = float(np.clip(reward, -rc.reward_clip, rc.reward_clip))
        self.pending.append((state, action, rew, next_state, bool(terminated)))
        ends = bool(terminated) or bool(truncated)
        if not ends and len(self.pending) < rc.n_step:
            return []
        count = len(self.pending) if ends else len(self.pending) - rc.n_step + 1
        ready = []
        for j in range(count):
            span = self.pending[j:j + rc.n_step]
            rewards = np.array([t[2] for t in span])
            powers = rc.gamma ** np.arange(len(span))
            ready.append((span[0][0], span[0][1], float(np.dot(powers, rewards)), span[-1][3], span[-1][4],
                          float(rc.gamma ** len(span))))
        del self.pending[:count]
        return ready
''',
}


def ns_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of pushes along episodes (each event: the episode goes on, is terminated, truncated, or both): the
    default config with episodes longer and shorter than n; another gamma; n of 1; n of 5 with a truncation;
    truncations, one passed as a keyword and one not; both flags at once; clipping of large rewards, and of
    rewards already inside the bound; a run that stops with transitions pending; an n of 0. Each gives, after
    every push, the transitions returned and the number pending; at the end, the pending list as the caller
    holds it."""
    rng = np.random.default_rng(166)

    def config(n_step=3, gamma=0.99, reward_clip=None):
        return SimpleNamespace(replay=SimpleNamespace(capacity=100, n_step=n_step, gamma=gamma,
                                                      reward_clip=reward_clip))

    calls: list[Callable[[], object]] = []
    for cfg, events, reward_scale in (
            (config(), "......T....T.T..T", 1.0),
            (config(gamma=0.9), "........T..", 1.0),
            (config(n_step=1, gamma=0.8), "...T..R.", 1.0),
            (config(n_step=5, gamma=0.95), "..T.......R...T", 1.0),
            (config(), "....R..r.T", 1.0),
            (config(gamma=0.9), "..B...T", 1.0),
            (config(reward_clip=1.0), ".....T..", 3.0),
            (config(n_step=2, reward_clip=0.5, gamma=0.9), "....R.", 0.3),
            (config(n_step=4, gamma=0.7), "..T..", 1.0),
            (config(n_step=0), "..", 1.0)):
        rewards = reward_scale * rng.normal(size=len(events))

        def call(cfg=cfg, events=events, rewards=rewards) -> object:
            acc = ns["NStepTransitions"](cfg)
            held = acc.pending
            trace: list[object] = []
            for t, event in enumerate(events):
                state = np.array([t, t % 3]) if t % 2 else t
                try:
                    if event in "RB":
                        out = acc.push(state, t % 3, float(rewards[t]), t + 1, event == "B", truncated=True)
                    elif event == "r":
                        out = acc.push(state, t % 3, float(rewards[t]), t + 1, False, True)
                    else:
                        out = acc.push(state, t % 3, float(rewards[t]), t + 1, event == "T")
                except ValueError:
                    trace.append("ValueError")
                    continue
                trace.append((out, len(acc.pending)))
            trace.append([item[:3] for item in held])
            return trace

        calls.append(call)
    return calls


# -- Spectral normalisation (Miyato et al. 2018) ------------------------------------------------------------------

SN_HEAD = '''class SpectralNorm:
    """Spectral normalisation ("Spectral Normalization for Generative Adversarial Networks") of one weight: the
    weight divided by an estimate of its largest singular value, from the power iteration carried over from call
    to call in ``self.u`` (a vector over the rows) and ``self.v`` (over the columns) of the weight seen as a
    matrix whose rows run along axis ``dim``. With ``coeff`` (None: plain normalisation) the weight is divided by
    ``max(1, sigma / coeff)`` instead, a bound on its norm as in the invertible ResNets of Behrmann et al."""

    def __init__(self, shape, dim=0, n_power_iterations=1, eps=1e-12, coeff=None, seed=0):
        if n_power_iterations < 1:
            raise ValueError("n_power_iterations must be positive")
        rows = shape[dim]
        cols = int(np.prod(shape)) // rows
        rng = np.random.default_rng(seed)
        u = rng.normal(size=rows)
        v = rng.normal(size=cols)
        self.u = u / max(float(np.linalg.norm(u)), eps)
        self.v = v / max(float(np.linalg.norm(v)), eps)
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps
        self.coeff = coeff
        self.training = True

    def compute_weight(self, weight):
'''
SN_BODY = '''        w = np.asarray(weight, dtype=np.float64)
        w_mat = np.moveaxis(w, self.dim, 0).reshape(w.shape[self.dim], -1)
        if w_mat.shape != (self.u.size, self.v.size):
            raise ValueError(f"weight of shape {w.shape} does not match the stored vectors")
        if self.training:
            u, v = self.u, self.v
            for _ in range(self.n_power_iterations):
                v = w_mat.T @ u
                v = v / max(float(np.linalg.norm(v)), self.eps)
                u = w_mat @ v
                u = u / max(float(np.linalg.norm(u)), self.eps)
            self.u[...] = u
            self.v[...] = v
        sigma = float(self.u @ w_mat @ self.v)
        if self.coeff is None:
            factor = sigma
        else:
            factor = max(1.0, sigma / self.coeff)
        return w / factor, sigma
'''
SN_DOC = '''        """The weight divided by its spectral norm as the power iteration estimates it; called once per
        forward.

        ``weight``: a float array, seen as the matrix W whose rows run along axis ``self.dim`` and whose columns
        run over the other axes in their order (``np.moveaxis(weight, dim, 0)`` flattened to 2-D); a weight that
        does not give a matrix of ``self.u.size`` rows and ``self.v.size`` columns raises ValueError. Settings,
        read from ``self``: ``dim``, ``n_power_iterations``, ``eps``, ``coeff`` and ``training``.

        While ``self.training``, starting from ``u = self.u``, ``n_power_iterations`` times: ``v = normalize(W.T
        @ u)``, then ``u = normalize(W @ v)``, where ``normalize(a) = a / max(||a||, eps)``; ``self.u`` and
        ``self.v`` are then overwritten with u and v (in place: the arrays themselves). Out of training they are
        left as they are. Then ``sigma = self.u @ W @ self.v``, and the weight is divided by sigma, or with
        ``coeff`` by ``max(1, sigma / coeff)``.

        Returns ``(normalized_weight, sigma)``: a float64 array of the weight's shape and a float. ``weight`` is
        not changed.
        """
'''
SN_GOLDEN = "\n\n" + SN_HEAD + SN_DOC + SN_BODY
SN_DRIVER = '''"""Train a small classifier whose two weight matrices are spectrally normalised, as the layers of an
SN-GAN discriminator are: python train_sn.py"""

import numpy as np

from sngan.spectral import SpectralNorm

HIDDEN = 16
BATCH = 64
STEPS = 300
LR = 0.2


def main():
    rng = np.random.default_rng(0)
    w1 = rng.normal(scale=0.5, size=(HIDDEN, 2))
    w2 = rng.normal(scale=0.5, size=(1, HIDDEN))
    sn1 = SpectralNorm(w1.shape, seed=1)
    sn2 = SpectralNorm(w2.shape, seed=2)
    for step in range(1, STEPS + 1):
        labels = rng.integers(0, 2, size=BATCH).astype(float)
        centre = np.where(labels[:, None] > 0.5, 1.0, -1.0) * np.array([1.0, 0.6])
        x = centre + 0.8 * rng.normal(size=(BATCH, 2))
        w1_sn, sigma1 = sn1.compute_weight(w1)
        w2_sn, sigma2 = sn2.compute_weight(w2)
        h = np.tanh(x @ w1_sn.T)
        logit = 3.0 * (h @ w2_sn.T)[:, 0]
        loss = float(np.mean(np.logaddexp(0.0, logit) - labels * logit))
        d_logit = 3.0 * (1.0 / (1.0 + np.exp(-logit)) - labels) / BATCH
        grad_w2 = d_logit[None, :] @ h
        d_pre = d_logit[:, None] * w2_sn * (1.0 - h * h)
        grad_w1 = d_pre.T @ x
        w1 -= LR * grad_w1 / sigma1  # sigma held constant, as a stop-gradient
        w2 -= LR * grad_w2 / sigma2
        if step % 50 == 0:
            accuracy = float(np.mean((logit > 0) == (labels > 0.5)))
            print(f"step {step}: loss {loss:.4f}, accuracy {accuracy:.3f}, sigma {sigma1:.4f} "
                  f"(exact {float(np.linalg.norm(w1, 2)):.4f}), {sigma2:.4f}")


if __name__ == "__main__":
    main()
'''

_sn = editor(SN_HEAD, SN_BODY)
_SN_ITERATE = '''                v = w_mat.T @ u
                v = v / max(float(np.linalg.norm(v)), self.eps)
                u = w_mat @ v
                u = u / max(float(np.linalg.norm(u)), self.eps)
'''
_SN_UPDATE = '''        if self.training:
            u, v = self.u, self.v
            for _ in range(self.n_power_iterations):
''' + _SN_ITERATE + '''            self.u[...] = u
            self.v[...] = v
'''
_SN_SIGMA = "        sigma = float(self.u @ w_mat @ self.v)\n"

SN_WRONG = {
    "one power iteration": _sn("for _ in range(self.n_power_iterations):", "for _ in range(1):"),
    "power iteration out of training": _sn(_SN_UPDATE, '''        u, v = self.u, self.v
        for _ in range(self.n_power_iterations):
            v = w_mat.T @ u
            v = v / max(float(np.linalg.norm(v)), self.eps)
            u = w_mat @ v
            u = u / max(float(np.linalg.norm(u)), self.eps)
        self.u[...] = u
        self.v[...] = v
'''),
    "reshaped without moving the axis": _sn("w_mat = np.moveaxis(w, self.dim, 0).reshape(w.shape[self.dim], -1)",
                                            "w_mat = w.reshape(w.shape[self.dim], -1)"),
    "normalised without eps": _sn(_SN_ITERATE, '''                v = w_mat.T @ u
                v = v / np.linalg.norm(v)
                u = w_mat @ v
                u = u / np.linalg.norm(u)
'''),
    "coeff ignored": _sn('''        if self.coeff is None:
            factor = sigma
        else:
            factor = max(1.0, sigma / self.coeff)
''', "        factor = sigma\n"),
    "coeff bound below one": _sn("factor = max(1.0, sigma / self.coeff)", "factor = sigma / self.coeff"),
    "vectors rebound, not updated in place": _sn('''            self.u[...] = u
            self.v[...] = v
''', '''            self.u = u
            self.v = v
'''),
    "sigma from the vectors before the update": SN_HEAD + SN_BODY.replace(_SN_SIGMA, "").replace(
        "        if self.training:\n", _SN_SIGMA + "        if self.training:\n"),
    "u updated before v": _sn(_SN_ITERATE, '''                u = w_mat @ v
                u = u / max(float(np.linalg.norm(u)), self.eps)
                v = w_mat.T @ u
                v = v / max(float(np.linalg.norm(v)), self.eps)
'''),
    "exact spectral norm": _sn(_SN_SIGMA, "        sigma = float(np.linalg.norm(w_mat, 2))\n"),
}
SN_RIGHT = {
    "permuted axes, math norms": SN_HEAD + '''        import math

        W = np.array(weight, dtype=float)
        d = self.dim if self.dim >= 0 else self.dim + W.ndim
        order = [d] + [i for i in range(W.ndim) if i != d]
        M = np.transpose(W, order).reshape(W.shape[d], -1)
        if M.shape[0] != len(self.u) or M.shape[1] != len(self.v):
            raise ValueError("weight and vectors disagree")

        def unit(a):
            return a / max(math.sqrt(float(np.sum(a * a))), self.eps)

        if self.training:
            u = self.u.copy()
            v = self.v.copy()
            for _ in range(self.n_power_iterations):
                v = unit(M.T.dot(u))
                u = unit(M.dot(v))
            np.copyto(self.u, u)
            np.copyto(self.v, v)
        s = float(self.u.dot(M.dot(self.v)))
        div = s if self.coeff is None else max(1.0, s / self.coeff)
        return W / div, s
''',
    "tensordot over the row axis": SN_HEAD + '''        w = np.asarray(weight, dtype=np.float64)
        axis = self.dim if self.dim >= 0 else w.ndim + self.dim
        rest = w.shape[:axis] + w.shape[axis + 1:]
        if w.shape[axis] != self.u.shape[0] or int(np.prod(rest)) != self.v.shape[0]:
            raise ValueError("shape mismatch")
        others = [i for i in range(w.ndim) if i != axis]
        inner = list(range(len(rest)))

        def times_v(vec):
            return np.tensordot(w, vec.reshape(rest), axes=(others, inner))

        if self.training:
            u, v = self.u, self.v
            for _ in range(self.n_power_iterations):
                v = np.tensordot(u, w, axes=([0], [axis])).reshape(-1)
                v = v / max(float(np.sqrt(v @ v)), self.eps)
                u = times_v(v)
                u = u / max(float(np.sqrt(u @ u)), self.eps)
            self.u[:] = u
            self.v[:] = v
        sigma = float(times_v(self.v) @ self.u)
        if self.coeff is not None:
            return w / max(1.0, sigma / self.coeff), sigma
        return w / sigma, sigma
''',
}


def sn_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a few calls on a weight that drifts between them, as in training: the defaults on 2-D weights;
    three iterations; training, then eval, then training again; ``dim`` 1 of a 2-D and of a 3-D weight, and a
    negative ``dim``; a 4-D convolution weight; a zero weight; ``coeff`` below and above the spectral norm; a
    weight of the wrong shape. Each gives, after every call, the weight and sigma returned, the stored vectors,
    the arrays first stored (as a module that shares them holds them), and the weight as the caller holds it."""
    rng = np.random.default_rng(167)
    calls: list[Callable[[], object]] = []
    for kwargs, shape, plan in (
            ({}, (5, 3), "ttt"),
            ({"seed": 3}, (2, 6), "tt"),
            ({"n_power_iterations": 3, "seed": 4}, (4, 6), "ttt"),
            ({"seed": 5}, (6, 4), "tteet"),
            ({"n_power_iterations": 2, "seed": 6}, (3, 5), "etet"),
            ({"dim": 1, "seed": 7}, (4, 3), "ttt"),
            ({"dim": 1, "seed": 8}, (3, 5, 2), "tte"),
            ({"dim": -1, "seed": 9}, (2, 3, 4), "tt"),
            ({"seed": 10}, (4, 2, 3, 3), "tt"),
            ({"seed": 11}, (4, 3), "tz"),
            ({"seed": 12}, (3, 3), "zt"),
            ({"coeff": 0.9, "seed": 13}, (5, 4), "ttt"),
            ({"coeff": 50.0, "seed": 14}, (5, 4), "tt"),
            ({"coeff": 2.0, "n_power_iterations": 2, "seed": 15}, (4, 4), "tet"),
            ({"seed": 16}, (5, 3), "tw")):
        weights = []
        w = 1.5 * rng.normal(size=shape)
        for mode in plan:
            w = w + 0.3 * rng.normal(size=shape)
            if mode == "z":
                weights.append(np.zeros(shape))
            elif mode == "w":
                weights.append(rng.normal(size=shape[::-1] + (2,)))
            else:
                weights.append(w.copy())

        def call(kwargs=kwargs, shape=shape, plan=plan, weights=weights) -> object:
            sn = ns["SpectralNorm"](shape, **kwargs)
            held_u, held_v = sn.u, sn.v
            trace: list[object] = []
            for mode, weight in zip(plan, weights, strict=True):
                sn.training = mode != "e"
                held = weight.copy()
                try:
                    out = sn.compute_weight(held)
                except ValueError:
                    out = "ValueError"
                trace.append((out, sn.u.copy(), sn.v.copy(), held_u.copy(), held_v.copy(), held))
            return trace

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
_MATH_NP = "import math\n\nimport numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "64-ArcFaceMargin", "files": {"facerec/__init__.py": "", "facerec/config.py": AF_CONFIG,
     "facerec/heads.py": '"""Margin-based classification heads."""\n\nimport math\n\nimport numpy as np\n'
     + AF_GOLDEN, "train_arcface.py": AF_DRIVER},
     "function": "facerec/heads.py::ArcFaceHead.forward", "command": "python train_arcface.py",
     "head": _MATH_NP, "wrong": AF_WRONG, "right": AF_RIGHT, "check": af_check,
     "gaps": {"pins scale": ["scale"],
              "easy_margin ignored": ["easy_margin"],
              "no fall-back past pi - m": ["th = math.cos(math.pi - c.margin)", "cosine > th"],
              "fall-back without the margin factor": ["mm = math.sin(math.pi - c.margin) * c.margin"],
              "easy margin kept at a cosine of zero": ["easy_margin", "cosine > 0.0"],
              "zero embeddings unguarded": ["np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)"],
              "ignore_index not honoured": ["ignore_index", "rows = np.nonzero(counted)[0]"],
              "margin on every class": ["np.where(target, phi, cosine)"],
              "centres not normalised": [
                  "w_hat = self.weight / np.maximum(np.linalg.norm(self.weight, axis=1, keepdims=True), 1e-12)"],
              "loss summed over the batch": ["np.mean(log_z - picked[np.arange(rows.size), labels[rows]])"]}},
    {"name": "65-SharpnessAwareMin", "files": {"flatmin/__init__.py": "", "flatmin/config.py": SA_CONFIG,
     "flatmin/sam.py": '"""Sharpness-aware minimisation."""\n\nimport numpy as np\n' + SA_GOLDEN,
     "train_sam.py": SA_DRIVER},
     "function": "flatmin/sam.py::SAM.step", "command": "python train_sam.py",
     "head": _NP, "wrong": SA_WRONG, "right": SA_RIGHT, "check": sa_check,
     "gaps": {"pins rho": ["rho"],
              "adaptive norm of the plain gradient": ["adaptive", "np.abs(self.params[name]) * grads[name]"],
              "adaptive ascent scaled by |w|": ["adaptive", "p * p if c.adaptive else 1.0"],
              "weight decay ignored": ["weight_decay"],
              "nesterov ignored": ["nesterov"],
              "tensors without gradient not skipped": ["grads.get(name) is not None"],
              "no eps in the ascent's norm": ["grad_norm + 1e-12"],
              "base step with the first gradient": ["_, grads = closure()"],
              "weights not restored": ["p[...] = old[name]"],
              "ascent normalised per tensor": [
                  "grad_norm = float(np.sqrt(sum(float(np.sum(g * g)) for g in scaled)))"]}},
    {"name": "66-NStepTransitions", "files": {"multistep/__init__.py": "", "multistep/config.py": NS_CONFIG,
     "multistep/nstep.py": '"""Multi-step transitions for replay."""\n\nimport numpy as np\n' + NS_GOLDEN,
     "train_nstep.py": NS_DRIVER},
     "function": "multistep/nstep.py::NStepTransitions.push", "command": "python train_nstep.py",
     "head": _NP, "wrong": NS_WRONG, "right": NS_RIGHT, "check": ns_check,
     "gaps": {"pins gamma": ["gamma"],
              "truncation ignored": ["truncated", "episode_over = bool(terminated or truncated)"],
              "truncation stored as terminal": ["truncated", "bool(terminated)"],
              "reward_clip ignored": ["reward_clip"],
              "rewards clipped to their sign": ["reward_clip", "r = min(max(r, -c.reward_clip), c.reward_clip)"],
              "discount of n steps for every transition": ["c.gamma ** k"],
              "only the oldest handed out at the end": ["episode_over", "self.pending.pop(0)"],
              "handed out a step late": ["len(self.pending) >= c.n_step"],
              "undiscounted return": ["ret += c.gamma ** i * self.pending[i][2]"],
              "discount one power short": ["c.gamma ** k"]}},
    {"name": "67-SpectralNormPowerIter", "files": {"sngan/__init__.py": "", "sngan/spectral.py":
     '"""Spectral normalisation of weights."""\n\nimport numpy as np\n' + SN_GOLDEN, "train_sn.py": SN_DRIVER},
     "function": "sngan/spectral.py::SpectralNorm.compute_weight", "command": "python train_sn.py",
     "head": _NP, "wrong": SN_WRONG, "right": SN_RIGHT, "check": sn_check,
     "gaps": {"one power iteration": ["n_power_iterations"],
              "power iteration out of training": ["training", "if self.training:"],
              "reshaped without moving the axis": ["dim", "np.moveaxis(w, self.dim, 0)"],
              "normalised without eps": ["eps", "v = v / max(float(np.linalg.norm(v)), self.eps)"],
              "coeff ignored": ["coeff"],
              "coeff bound below one": ["coeff", "max(1.0, sigma / self.coeff)"],
              "vectors rebound, not updated in place": ["self.u[...] = u", "self.v[...] = v"],
              "sigma from the vectors before the update": ["sigma = float(self.u @ w_mat @ self.v)"],
              "u updated before v": ["v = w_mat.T @ u", "u = w_mat @ v"],
              "exact spectral norm": ["sigma = float(self.u @ w_mat @ self.v)"]}},
]
"""The sixteenth fresh held-out tasks."""
