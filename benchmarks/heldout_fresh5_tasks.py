"""A sixth held-out set for ``wrong_answers.py --set fresh5``: three numpy tasks of shapes that no other set nor any
test fixture has. The first is a batch-normalisation layer's forward pass (Ioffe and Szegedy 2015) over inputs of
any rank, which in training normalises by the batch's biased variance and updates its running statistics in place
with the unbiased one, by a momentum or, with ``momentum=None``, as a cumulative average; the driver trains with the
default momentum only and never evaluates. The second is the generalized IoU loss of axis-aligned boxes (Rezatofighi
et al. 2019), with an ``eps`` guard for degenerate boxes, optional per-box weights and a reduction option, none of
which the driver leaves at its default. The third is a cyclical schedule of a VAE's KL weight (Fu et al. 2019), a
method called once per training step that reads its nested config (``self.cfg.kl.*``): cycles of a fractional
length, a linear or cosine rise over a share of each cycle, and the weight held at its maximum once the planned steps
are done, which the driver's run of exactly those steps never reaches. Written before any further rule of the
recorder, and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

# -- Batch normalisation with running statistics (Ioffe and Szegedy 2015) -----------------------------------------

BN_HEAD = '''class BatchNorm:
    """Batch normalisation over axis 1 (channels) of (batch, channels, *spatial) inputs."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        self.eps = eps
        self.momentum = momentum
        self.weight = np.ones(num_features)
        self.bias = np.zeros(num_features)
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)
        self.num_batches_tracked = 0
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def state_dict(self):
        """The layer's arrays themselves, as a checkpoint writer keeps them."""
        return {"weight": self.weight, "bias": self.bias, "running_mean": self.running_mean,
                "running_var": self.running_var}

    def forward(self, x):
'''
BN_BODY = '''        axes = (0,) + tuple(range(2, x.ndim))
        shape = (1, -1) + (1,) * (x.ndim - 2)
        if self.training:
            mean = x.mean(axis=axes)
            var = x.var(axis=axes)
            n = x.size // x.shape[1]
            self.num_batches_tracked += 1
            if self.momentum is None:
                factor = 1.0 / self.num_batches_tracked
            else:
                factor = self.momentum
            self.running_mean *= 1.0 - factor
            self.running_mean += factor * mean
            self.running_var *= 1.0 - factor
            self.running_var += factor * var * n / max(n - 1, 1)
        else:
            mean, var = self.running_mean, self.running_var
        x_hat = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + self.eps)
        return x_hat * self.weight.reshape(shape) + self.bias.reshape(shape)
'''
BN_DOC = '''        """Normalise ``x`` (batch, channels, *spatial) per channel, then scale by ``weight`` and shift by
        ``bias``. In training (``self.training``) the statistics are the batch's mean and biased variance over
        every axis but 1, and the running statistics are updated in place (``state_dict`` hands these very arrays
        out): ``running = (1 - f) * running + f * batch_stat``, with the unbiased variance (n / (n - 1), n the
        values per channel, at least 1 below) for ``running_var``; f is ``momentum``, or with ``momentum=None``
        ``1 / num_batches_tracked`` (a cumulative average), the counter counting this batch. Out of training the
        running statistics normalise and nothing is updated. The variance is under the square root with
        ``eps``."""
'''
BN_GOLDEN = "\n\n" + BN_HEAD + BN_DOC + BN_BODY
BN_DRIVER = '''"""Train a batch-normalised linear read-out of random feature maps: python train.py"""

import numpy as np

from layers.norm import BatchNorm


def main():
    rng = np.random.default_rng(0)
    bn = BatchNorm(3)
    checkpoint = bn.state_dict()
    readout = np.zeros(3)
    for step in range(6):
        x = 2.0 + 3.0 * rng.normal(size=(8, 3, 4, 4))
        y = x[:, 0].mean(axis=(1, 2)) - x[:, 2].mean(axis=(1, 2))
        feats = bn.forward(x).mean(axis=(2, 3))
        err = feats @ readout - y
        readout -= 0.1 * feats.T @ err / len(err)
        if step % 2 == 1:
            print(f"step {step}: loss {np.mean(err ** 2):.4f}, "
                  f"saved running mean {np.round(checkpoint['running_mean'], 3)}, "
                  f"saved running var {np.round(checkpoint['running_var'], 3)}")


if __name__ == "__main__":
    main()
'''

_bn = editor(BN_HEAD, BN_BODY)

BN_WRONG = {
    "running variance biased": _bn("factor * var * n / max(n - 1, 1)", "factor * var"),
    "normalised by the unbiased variance": _bn("var = x.var(axis=axes)", "var = x.var(axis=axes, ddof=1)").replace(
        "factor * var * n / max(n - 1, 1)", "factor * var"),
    "momentum weighs the old statistics": _bn('''            self.running_mean *= 1.0 - factor
            self.running_mean += factor * mean
            self.running_var *= 1.0 - factor
            self.running_var += factor * var * n / max(n - 1, 1)
''', '''            self.running_mean *= factor
            self.running_mean += (1.0 - factor) * mean
            self.running_var *= factor
            self.running_var += (1.0 - factor) * var * n / max(n - 1, 1)
'''),
    "momentum=None not handled": _bn('''            if self.momentum is None:
                factor = 1.0 / self.num_batches_tracked
            else:
                factor = self.momentum
''', '''            factor = self.momentum
'''),
    "cumulative average one batch behind": _bn("factor = 1.0 / self.num_batches_tracked",
                                               "factor = 1.0 / (self.num_batches_tracked + 1)"),
    "batches never counted": _bn("            self.num_batches_tracked += 1\n", "").replace(
        "factor = 1.0 / self.num_batches_tracked", "factor = 1.0 / max(self.num_batches_tracked, 1)"),
    "eps outside the square root": _bn("np.sqrt(var.reshape(shape) + self.eps)",
                                       "(np.sqrt(var.reshape(shape)) + self.eps)"),
    "batch statistics out of training": _bn('''        if self.training:
            mean = x.mean(axis=axes)''', '''        if True:
            mean = x.mean(axis=axes)'''),
    "running statistics replaced by new arrays": _bn('''            self.running_mean *= 1.0 - factor
            self.running_mean += factor * mean
            self.running_var *= 1.0 - factor
            self.running_var += factor * var * n / max(n - 1, 1)
''', '''            self.running_mean = (1.0 - factor) * self.running_mean + factor * mean
            self.running_var = (1.0 - factor) * self.running_var + factor * var * n / max(n - 1, 1)
'''),
}
BN_RIGHT = {
    "channels first, flattened": BN_HEAD + '''        c = x.shape[1]
        flat = np.moveaxis(x, 1, 0).reshape(c, -1)
        if self.training:
            m = flat.shape[1]
            mu = flat.mean(axis=1)
            sigma2 = ((flat - mu[:, None]) ** 2).mean(axis=1)
            self.num_batches_tracked += 1
            f = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked
            np.multiply(self.running_mean, 1.0 - f, out=self.running_mean)
            self.running_mean += f * mu
            unbiased = sigma2 * m / (m - 1) if m > 1 else sigma2
            self.running_var[:] = (1.0 - f) * self.running_var + f * unbiased
        else:
            mu, sigma2 = self.running_mean, self.running_var
        y = (flat - mu[:, None]) / np.sqrt(sigma2[:, None] + self.eps)
        y = y * self.weight[:, None] + self.bias[:, None]
        return np.moveaxis(y.reshape((c, x.shape[0]) + x.shape[2:]), 0, 1)
''',
    "a loop over channels": BN_HEAD + '''        out = np.empty_like(x, dtype=float)
        if self.training:
            self.num_batches_tracked += 1
        rate = self.momentum
        if rate is None:
            rate = 1.0 / max(self.num_batches_tracked, 1)
        for c in range(x.shape[1]):
            values = x[:, c]
            if self.training:
                mu = values.mean()
                var = values.var()
                count = values.size
                self.running_mean[c] += rate * (mu - self.running_mean[c])
                corrected = var * count / (count - 1) if count > 1 else var
                self.running_var[c] += rate * (corrected - self.running_var[c])
            else:
                mu, var = self.running_mean[c], self.running_var[c]
            out[:, c] = self.weight[c] * (values - mu) / np.sqrt(var + self.eps) + self.bias[c]
        return out
''',
}


def bn_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Sequences of ``forward`` calls on general settings: 2-D, 3-D and 4-D inputs, other momenta and eps, the
    cumulative average, a layer put out of training after some batches, one value per channel, trained weights; each
    gives the outputs, the arrays a checkpoint got before the calls, and the counter."""
    rng = np.random.default_rng(46)
    calls = []
    for shape, momentum, eps, train_steps, eval_steps in (((6, 3), 0.1, 1e-5, 3, 1), ((4, 2, 5), None, 1e-3, 4, 1),
                                                          ((3, 4, 2, 3), 0.3, 1e-5, 2, 2), ((1, 3), 0.5, 0.1, 2, 1),
                                                          ((5, 2, 3, 3), None, 1e-5, 3, 0)):
        batches = [1.5 + 2.0 * rng.normal(size=shape) for _ in range(train_steps + eval_steps)]
        weight, bias = rng.normal(size=shape[1]), rng.normal(size=shape[1])

        def call(c=shape[1], m=momentum, e=eps, t=train_steps, xs=batches, w=weight, b=bias) -> object:
            layer = ns["BatchNorm"](c, e, m)
            layer.weight[...], layer.bias[...] = w, b
            saved = layer.state_dict()
            outs = []
            for i, x in enumerate(xs):
                if i == t:
                    layer.train(False)
                outs.append(layer.forward(x))
            return outs, [saved[k].copy() for k in sorted(saved)], layer.num_batches_tracked

        calls.append(call)
    return calls


# -- Generalized IoU loss (Rezatofighi et al. 2019) ----------------------------------------------------------------

GI_SIG = "def giou_loss(pred, target, weights=None, reduction=\"mean\", eps=1e-7):\n"
GI_BODY = '''    px1, py1, px2, py2 = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    tx1, ty1, tx2, ty2 = target[:, 0], target[:, 1], target[:, 2], target[:, 3]
    area_p = (px2 - px1) * (py2 - py1)
    area_t = (tx2 - tx1) * (ty2 - ty1)
    inter_w = np.clip(np.minimum(px2, tx2) - np.maximum(px1, tx1), 0.0, None)
    inter_h = np.clip(np.minimum(py2, ty2) - np.maximum(py1, ty1), 0.0, None)
    inter = inter_w * inter_h
    union = area_p + area_t - inter
    iou = inter / (union + eps)
    hull = (np.maximum(px2, tx2) - np.minimum(px1, tx1)) * (np.maximum(py2, ty2) - np.minimum(py1, ty1))
    giou = iou - (hull - union) / (hull + eps)
    loss = 1.0 - giou
    if weights is not None:
        loss = loss * weights
    if reduction == "mean":
        return float(loss.mean())
    if reduction == "sum":
        return float(loss.sum())
    if reduction == "none":
        return loss
    raise ValueError(f"unknown reduction {reduction!r}")
'''
GI_DOC = '''    """Generalized IoU loss (Rezatofighi et al. 2019) of predicted boxes ``pred`` against ``target``, both
    (n, 4) as (x1, y1, x2, y2) with x2 >= x1 and y2 >= y1. Per pair: IoU is the intersection's area over
    ``union + eps``, GIoU is ``IoU - (C - union) / (C + eps)`` with C the area of the smallest box enclosing both,
    and the loss is ``1 - GIoU``, times ``weights`` (n,) when given. ``reduction``: "mean", "sum" or "none" (the
    per-pair losses); another raises ValueError."""
'''
GI_GOLDEN = "\n\n" + GI_SIG + GI_DOC + GI_BODY
GI_DRIVER = '''"""Regress noisy boxes towards their targets with the GIoU loss: python fit_boxes.py"""

import numpy as np

from boxes.losses import giou_loss


def main():
    rng = np.random.default_rng(0)
    corners = rng.uniform(0.0, 20.0, size=(16, 2))
    target = np.concatenate([corners, corners + rng.uniform(2.0, 8.0, size=(16, 2))], axis=1)
    pred = target + rng.normal(scale=3.0, size=target.shape)
    pred[:, 2:] = np.maximum(pred[:, 2:], pred[:, :2] + 0.5)
    for step in range(5):
        loss = giou_loss(pred, target)
        print(f"step {step}: GIoU loss {loss:.4f}")
        pred += 0.3 * (target - pred)


if __name__ == "__main__":
    main()
'''

_gi = editor(GI_SIG, GI_BODY)

GI_WRONG = {
    "intersection not clamped": _gi('''    inter_w = np.clip(np.minimum(px2, tx2) - np.maximum(px1, tx1), 0.0, None)
    inter_h = np.clip(np.minimum(py2, ty2) - np.maximum(py1, ty1), 0.0, None)
''', '''    inter_w = np.minimum(px2, tx2) - np.maximum(px1, tx1)
    inter_h = np.minimum(py2, ty2) - np.maximum(py1, ty1)
'''),
    "union counts the intersection twice": _gi("union = area_p + area_t - inter", "union = area_p + area_t"),
    "penalty over the union": _gi("giou = iou - (hull - union) / (hull + eps)",
                                  "giou = iou - (hull - union) / (union + eps)"),
    "plain IoU loss": _gi("giou = iou - (hull - union) / (hull + eps)", "giou = iou"),
    "eps dropped": _gi("iou = inter / (union + eps)", "iou = inter / union").replace(
        "(hull - union) / (hull + eps)", "(hull - union) / hull"),
    "enclosing box from the inner corners": _gi(
        "hull = (np.maximum(px2, tx2) - np.minimum(px1, tx1)) * (np.maximum(py2, ty2) - np.minimum(py1, ty1))",
        "hull = (np.maximum(px2, tx2) - np.maximum(px1, tx1)) * (np.maximum(py2, ty2) - np.maximum(py1, ty1))"),
    "weights ignored": _gi('''    if weights is not None:
        loss = loss * weights
''', ""),
    "reduction ignored": _gi('''    if reduction == "mean":
        return float(loss.mean())
    if reduction == "sum":
        return float(loss.sum())
    if reduction == "none":
        return loss
    raise ValueError(f"unknown reduction {reduction!r}")
''', '''    return float(loss.mean())
'''),
    "unknown reduction taken as none": _gi('''    if reduction == "none":
        return loss
    raise ValueError(f"unknown reduction {reduction!r}")
''', '''    return loss
'''),
}
GI_RIGHT = {
    "corner arrays and an area helper": GI_SIG + '''    top_left = np.maximum(pred[:, :2], target[:, :2])
    bottom_right = np.minimum(pred[:, 2:], target[:, 2:])
    inter = _area(np.concatenate([top_left, np.maximum(bottom_right, top_left)], axis=1))
    union = _area(pred) + _area(target) - inter
    outer = np.concatenate([np.minimum(pred[:, :2], target[:, :2]), np.maximum(pred[:, 2:], target[:, 2:])], axis=1)
    enclosing = _area(outer)
    losses = 1.0 - inter / (union + eps) + (enclosing - union) / (enclosing + eps)
    if weights is not None:
        losses = weights * losses
    reducers = {"none": lambda v: v, "sum": lambda v: float(np.sum(v)), "mean": lambda v: float(np.mean(v))}
    if reduction not in reducers:
        raise ValueError(reduction)
    return reducers[reduction](losses)


def _area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
''',
    "box by box": GI_SIG + '''    if reduction not in ("mean", "sum", "none"):
        raise ValueError("reduction must be mean, sum or none")
    out = []
    for i, (a, b) in enumerate(zip(pred, target)):
        iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        both = iw * ih
        total = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - both
        c = (max(a[2], b[2]) - min(a[0], b[0])) * (max(a[3], b[3]) - min(a[1], b[1]))
        value = 1.0 - (both / (total + eps) - (c - total) / (c + eps))
        out.append(value * (1.0 if weights is None else weights[i]))
    out = np.array(out)
    if reduction == "none":
        return out
    return float(out.sum() if reduction == "sum" else out.mean())
''',
}


def gi_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``giou_loss`` on general inputs: disjoint boxes (apart along one axis or both), nested and
    identical boxes, degenerate boxes of zero area, weights, every reduction and an unknown one, another eps."""
    rng = np.random.default_rng(46)
    f = ns["giou_loss"]
    calls = []
    for n, weighted, reduction, eps, degenerate in ((8, False, "mean", 1e-7, False), (6, True, "none", 1e-7, True),
                                                    (7, True, "sum", 1e-3, False), (5, False, "none", 1e-7, True),
                                                    (6, True, "mean", 1e-7, False), (4, False, "max", 1e-7, False)):
        corners = rng.uniform(0.0, 10.0, size=(n, 2))
        target = np.concatenate([corners, corners + rng.uniform(0.5, 4.0, size=(n, 2))], axis=1)
        start = rng.uniform(0.0, 12.0, size=(n, 2))
        pred = np.concatenate([start, start + rng.uniform(0.5, 5.0, size=(n, 2))], axis=1)
        pred[0] = target[0]  # identical
        pred[1] = target[1] + np.array([0.2, 0.2, -0.2, -0.2])  # nested
        pred[2] = target[2] + np.array([20.0, 0.5, 20.0, 0.5])  # apart along x only
        if degenerate:
            pred[3] = target[3] = np.array([1.0, 1.0, 1.0, 1.0])  # two identical points
            pred[4, 2] = pred[4, 0]  # a line
        weights = rng.uniform(0.0, 2.0, size=n) if weighted else None
        calls.append(lambda p=pred, t=target, w=weights, k=(reduction, eps): f(p, t, w, *k))
    return calls


# -- Cyclical KL annealing (Fu et al. 2019) -----------------------------------------------------------------------

KL_CONFIG = '''"""Training configuration."""

from dataclasses import dataclass, field


@dataclass
class KLConfig:
    cycles: int = 4
    ratio: float = 0.5
    beta_min: float = 0.0
    beta_max: float = 1.0
    shape: str = "linear"


@dataclass
class Config:
    latent: int = 2
    lr: float = 0.05
    kl: KLConfig = field(default_factory=KLConfig)
'''
KL_HEAD = '''class KLSchedule:
    """The weight of the KL term of a VAE's loss, one value per training step (Fu et al. 2019)."""

    def __init__(self, cfg, total_steps):
        self.cfg = cfg
        self.total_steps = total_steps
        self.t = 0

    def step(self):
'''
KL_BODY = '''        kl = self.cfg.kl
        t = self.t
        self.t += 1
        if t >= self.total_steps:
            return kl.beta_max
        period = self.total_steps / kl.cycles
        tau = (t % period) / period
        rise = min(tau / kl.ratio, 1.0)
        if kl.shape == "cosine":
            rise = 0.5 * (1.0 - math.cos(math.pi * rise))
        elif kl.shape != "linear":
            raise ValueError(f"unknown shape {kl.shape!r}")
        return kl.beta_min + (kl.beta_max - kl.beta_min) * rise
'''
KL_DOC = '''        """The KL weight of the current step, then one step on (``self.t`` counts the calls). The
        ``total_steps`` are cut into ``cfg.kl.cycles`` cycles of ``total_steps / cycles`` steps, not rounded; at
        step t the position in the cycle is ``tau = (t mod period) / period``. Over the first ``cfg.kl.ratio`` of
        each cycle the weight rises from ``beta_min`` to ``beta_max`` (``shape`` "linear": in proportion to
        ``tau / ratio``; "cosine": as ``(1 - cos(pi * tau / ratio)) / 2``; another shape raises ValueError), then
        stays at ``beta_max`` to the cycle's end. From step ``total_steps`` on it is ``beta_max``."""
'''
KL_GOLDEN = "\n\n" + KL_HEAD + KL_DOC + KL_BODY
KL_DRIVER = '''"""Train a linear-Gaussian VAE on 2-D data with a cyclical KL weight: python train_vae.py"""

import numpy as np

from vae.config import Config
from vae.schedule import KLSchedule


def main():
    cfg = Config()
    rng = np.random.default_rng(0)
    data = rng.normal(size=(256, 2)) @ np.array([[2.0, 0.0], [1.0, 0.5]])
    enc = 0.1 * rng.normal(size=(2, cfg.latent))
    dec = 0.1 * rng.normal(size=(cfg.latent, 2))
    total_steps = 40
    schedule = KLSchedule(cfg, total_steps)
    for step in range(total_steps):
        x = data[rng.integers(0, len(data), size=32)]
        mu = x @ enc
        z = mu + rng.normal(size=mu.shape)
        err = z @ dec - x
        beta = schedule.step()
        grad_dec = z.T @ err / len(x)
        grad_enc = x.T @ (err @ dec.T + beta * mu) / len(x)
        dec -= cfg.lr * grad_dec
        enc -= cfg.lr * grad_enc
        if step % 5 == 4:
            loss = np.mean(np.sum(err ** 2, axis=1)) / 2 + beta * np.mean(np.sum(mu ** 2, axis=1)) / 2
            print(f"step {step}: beta {beta:.3f}, loss {loss:.4f}")


if __name__ == "__main__":
    main()
'''

_kl = editor(KL_HEAD, KL_BODY)

KL_WRONG = {
    "advanced before reading": _kl('''        t = self.t
        self.t += 1
''', '''        self.t += 1
        t = self.t
'''),
    "period rounded down": _kl("period = self.total_steps / kl.cycles", "period = self.total_steps // kl.cycles"),
    "pins cycles": _kl("period = self.total_steps / kl.cycles", "period = self.total_steps / 4"),
    "pins ratio": _kl("rise = min(tau / kl.ratio, 1.0)", "rise = min(tau / 0.5, 1.0)"),
    "no plateau": _kl("rise = min(tau / kl.ratio, 1.0)", "rise = tau / kl.ratio"),
    "beta_min ignored": _kl("return kl.beta_min + (kl.beta_max - kl.beta_min) * rise", "return kl.beta_max * rise"),
    "no hold after the last step": _kl('''        if t >= self.total_steps:
            return kl.beta_max
''', ""),
    "shape ignored": _kl('''        if kl.shape == "cosine":
            rise = 0.5 * (1.0 - math.cos(math.pi * rise))
        elif kl.shape != "linear":
            raise ValueError(f"unknown shape {kl.shape!r}")
''', ""),
    "cosine over the whole cycle": _kl("rise = 0.5 * (1.0 - math.cos(math.pi * rise))",
                                       "rise = 0.5 * (1.0 - math.cos(math.pi * tau))"),
}
KL_RIGHT = {
    "cycle index by floor division": KL_HEAD + '''        cfg = self.cfg.kl
        step, self.t = self.t, self.t + 1
        if step >= self.total_steps:
            return cfg.beta_max
        if cfg.shape not in ("linear", "cosine"):
            raise ValueError(cfg.shape)
        length = self.total_steps / cfg.cycles
        into = step - (step // length) * length
        frac = into / (length * cfg.ratio)
        frac = 1.0 if frac > 1.0 else frac
        if cfg.shape == "cosine":
            frac = (1.0 - math.cos(math.pi * frac)) / 2.0
        return cfg.beta_min + frac * (cfg.beta_max - cfg.beta_min)
''',
    "numpy interpolation": KL_HEAD + '''        kl = self.cfg.kl
        t = self.t
        self.t = t + 1
        if t >= self.total_steps:
            return kl.beta_max
        period = self.total_steps / kl.cycles
        tau = np.fmod(t, period) / period
        ramp = float(np.interp(tau, [0.0, kl.ratio, 1.0], [0.0, 1.0, 1.0]))
        if kl.shape == "linear":
            weight = ramp
        elif kl.shape == "cosine":
            weight = float(np.sin(np.pi * ramp / 2.0) ** 2)
        else:
            raise ValueError(f"shape {kl.shape}")
        return float(np.interp(weight, [0.0, 1.0], [kl.beta_min, kl.beta_max]))
''',
}


def kl_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of ``step`` past ``total_steps`` on general settings: cycles of fractional length, other ratios and
    beta ranges, the cosine shape, one cycle, and an unknown shape; each gives the weights and the count."""
    calls = []
    for total, cycles, ratio, low, high, shape in ((30, 4, 0.5, 0.0, 1.0, "linear"), (45, 2, 0.25, 0.1, 0.8, "linear"),
                                                   (20, 3, 0.7, 0.0, 2.0, "cosine"), (12, 1, 0.4, 0.2, 1.0, "cosine"),
                                                   (18, 4, 1.0, 0.05, 0.5, "linear"), (10, 2, 0.5, 0.0, 1.0, "step")):
        cfg = SimpleNamespace(kl=SimpleNamespace(cycles=cycles, ratio=ratio, beta_min=low, beta_max=high, shape=shape))

        def call(cfg=cfg, total=total) -> object:
            schedule = ns["KLSchedule"](cfg, total)
            betas = [schedule.step() for _ in range(total + 3)]
            return betas, schedule.t

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "26-BatchNorm", "files": {"layers/__init__.py": "", "layers/norm.py":
     '"""Normalisation layers."""\n\nimport numpy as np\n' + BN_GOLDEN, "train.py": BN_DRIVER},
     "function": "layers/norm.py::BatchNorm.forward", "command": "python train.py", "head": _NP,
     "wrong": BN_WRONG, "right": BN_RIGHT, "check": bn_check,
     "gaps": {"running variance biased": ["max(n - 1, 1)"], "normalised by the unbiased variance": ["x.var(axis=axes)"],
              "momentum weighs the old statistics": ["1.0 - factor"], "momentum=None not handled": ["momentum"],
              "cumulative average one batch behind": ["num_batches_tracked"],
              "batches never counted": ["num_batches_tracked"], "eps outside the square root": ["self.eps"],
              "batch statistics out of training": ["training"],
              "running statistics replaced by new arrays": ["running_mean", "running_var"]}},
    {"name": "27-GIoULoss", "files": {"boxes/__init__.py": "", "boxes/losses.py":
     '"""Box regression losses."""\n\nimport numpy as np\n' + GI_GOLDEN, "fit_boxes.py": GI_DRIVER},
     "function": "boxes/losses.py::giou_loss", "command": "python fit_boxes.py", "head": _NP,
     "wrong": GI_WRONG, "right": GI_RIGHT, "check": gi_check,
     "gaps": {"intersection not clamped": ["np.clip"], "union counts the intersection twice": ["- inter"],
              "penalty over the union": ["(hull + eps)"], "plain IoU loss": ["(hull - union) / (hull + eps)"],
              "eps dropped": ["eps"], "enclosing box from the inner corners": ["np.minimum(px1, tx1)"],
              "weights ignored": ["weights"], "reduction ignored": ["reduction"],
              "unknown reduction taken as none": ["reduction", "raise ValueError"]}},
    {"name": "28-CyclicalKLBeta", "files": {"vae/__init__.py": "", "vae/config.py": KL_CONFIG, "vae/schedule.py":
     '"""KL weight schedules."""\n\nimport math\n' + KL_GOLDEN, "train_vae.py": KL_DRIVER},
     "function": "vae/schedule.py::KLSchedule.step", "command": "python train_vae.py",
     "head": "import math\n\nimport numpy as np\n\n\n", "wrong": KL_WRONG, "right": KL_RIGHT, "check": kl_check,
     "gaps": {"advanced before reading": ["self.t"], "period rounded down": ["self.total_steps / kl.cycles"],
              "pins cycles": ["cycles"], "pins ratio": ["ratio"], "no plateau": ["min(tau / kl.ratio, 1.0)"],
              "beta_min ignored": ["beta_min"], "no hold after the last step": ["t >= self.total_steps"],
              "shape ignored": ["shape"], "cosine over the whole cycle": ["math.cos(math.pi * rise)"]}},
]
"""The fifth fresh held-out tasks."""
