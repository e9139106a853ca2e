"""A fourth held-out set for ``wrong_answers.py --set fresh3``: two numpy tasks of shapes that no other set nor any
test fixture has. The first is a soft Dice loss for segmentation (Milletari, Navab and Ahmadi 2016): per sample and
class over any number of spatial axes, with a smoothing term, a ``squared`` denominator (V-Net's) and the background
channel optionally left out; the driver takes neither option. The second is an exponential moving average of model
weights (Tarvainen and Valpola 2017), a method that keeps a shadow copy of each parameter and warms its decay up
with the number of updates; the driver calls it once per training step. Written after the check of untouched
arguments, before any further rule, and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from corpus_edits import editor

# -- Soft Dice loss (Milletari et al. 2016) -----------------------------------------------------------------------

DL_SIG = "def dice_loss(probs, target, smooth=1.0, include_background=True, squared=False):\n"
DL_BODY = '''    if not include_background:
        probs, target = probs[:, 1:], target[:, 1:]
    axes = tuple(range(2, probs.ndim))
    inter = (probs * target).sum(axis=axes)
    if squared:
        denom = (probs ** 2).sum(axis=axes) + (target ** 2).sum(axis=axes)
    else:
        denom = probs.sum(axis=axes) + target.sum(axis=axes)
    dice = (2.0 * inter + smooth) / (denom + smooth)
    return float(1.0 - dice.mean())
'''
DL_DOC = '''    """Soft Dice loss of class probabilities ``probs`` against ``target`` (one-hot or soft), both (batch,
    classes, *spatial). For each sample and class: ``(2 * sum(p * t) + smooth) / (sum(p) + sum(t) + smooth)`` over
    the spatial axes (with ``squared``, sums of ``p ** 2`` and ``t ** 2`` below); the loss is 1 minus the mean over
    samples and classes. Without ``include_background`` class 0 is left out."""
'''
DL_GOLDEN = "\n\n" + DL_SIG + DL_DOC + DL_BODY
DL_DRIVER = '''"""Fit per-pixel class logits to random masks with the Dice loss: python segment.py"""

import numpy as np

from seg.losses import dice_loss


def main():
    rng = np.random.default_rng(0)
    for step in range(4):
        logits = rng.normal(size=(2, 3, 8, 8))
        probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        target = np.eye(3)[rng.integers(0, 3, size=(2, 8, 8))].transpose(0, 3, 1, 2)
        print(f"step {step}: dice loss {dice_loss(probs, target):.4f}")


if __name__ == "__main__":
    main()
'''

_dl = editor(DL_SIG, DL_BODY)

DL_WRONG = {
    "smooth only below": _dl("(2.0 * inter + smooth)", "(2.0 * inter)"),
    "include_background ignored": _dl('''    if not include_background:
        probs, target = probs[:, 1:], target[:, 1:]
''', ""),
    "squared ignored": _dl('''    if squared:
        denom = (probs ** 2).sum(axis=axes) + (target ** 2).sum(axis=axes)
    else:
        denom = probs.sum(axis=axes) + target.sum(axis=axes)
''', '''    denom = probs.sum(axis=axes) + target.sum(axis=axes)
'''),
    "target not squared": _dl("(target ** 2).sum(axis=axes)", "target.sum(axis=axes)"),
    "sums over the batch too": _dl("axes = tuple(range(2, probs.ndim))", "axes = (0, *range(2, probs.ndim))"),
    "no factor 2": _dl("(2.0 * inter + smooth)", "(inter + smooth)"),
    "classes summed": _dl("return float(1.0 - dice.mean())", "return float((1.0 - dice).sum(axis=-1).mean())"),
    "background dropped by the last class": _dl("probs, target = probs[:, 1:], target[:, 1:]",
                                                "probs, target = probs[:, :-1], target[:, :-1]"),
}
DL_RIGHT = {
    "einsum over flattened pixels": DL_SIG + '''    start = 0 if include_background else 1
    p = probs[:, start:].reshape(probs.shape[0], probs.shape[1] - start, -1)
    t = target[:, start:].reshape(target.shape[0], target.shape[1] - start, -1)
    overlap = np.einsum("bcn,bcn->bc", p, t)
    if squared:
        size = np.einsum("bcn,bcn->bc", p, p) + np.einsum("bcn,bcn->bc", t, t)
    else:
        size = p.sum(-1) + t.sum(-1)
    return float(np.mean(1.0 - (2 * overlap + smooth) / (size + smooth)))
''',
    "a loop over samples and classes": DL_SIG + '''    first = 0 if include_background else 1
    classes = range(first, probs.shape[1])
    losses = []
    for b in range(probs.shape[0]):
        for c in classes:
            p, t = probs[b, c].ravel(), target[b, c].ravel()
            den = (p @ p + t @ t) if squared else (p.sum() + t.sum())
            losses.append(1.0 - (2.0 * (p @ t) + smooth) / (den + smooth))
    return float(np.mean(losses))
''',
}


def dl_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``dice_loss`` on general inputs: soft targets, one and three spatial axes, each option on, other
    smoothing, classes of very different sizes."""
    rng = np.random.default_rng(46)
    f = ns["dice_loss"]
    calls = []
    for shape, smooth, background, squared, soft in (((3, 4, 5, 6), 1.0, False, False, False),
                                                     ((2, 3, 7), 0.5, True, True, True),
                                                     ((2, 5, 3, 4, 2), 1e-5, True, False, True),
                                                     ((4, 2, 6, 6), 2.0, False, True, False),
                                                     ((1, 3, 9, 3), 1.0, True, False, False)):
        logits = rng.normal(scale=2.0, size=shape)
        probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        if soft:
            raw = rng.random(shape)
            target = raw / raw.sum(axis=1, keepdims=True)
        else:
            target = np.moveaxis(np.eye(shape[1])[rng.integers(0, shape[1], size=(shape[0], *shape[2:]))], -1, 1)
        calls.append(lambda p=probs, t=target, k=(smooth, background, squared): f(p, t, *k))
    return calls


# -- Weight EMA (Tarvainen and Valpola 2017) ----------------------------------------------------------------------

EMA_HEAD = '''class WeightEMA:
    """An exponential moving average of a model's parameters (the mean teacher)."""

    def __init__(self, decay=0.999, warmup=True):
        self.decay = decay
        self.warmup = warmup
        self.num_updates = 0
        self.shadow = {}

    def update(self, params):
'''
EMA_BODY = '''        self.num_updates += 1
        decay = self.decay
        if self.warmup:
            decay = min(decay, (1.0 + self.num_updates) / (10.0 + self.num_updates))
        for name, value in params.items():
            if name in self.shadow:
                self.shadow[name] -= (1.0 - decay) * (self.shadow[name] - value)
            else:
                self.shadow[name] = np.array(value, copy=True)
        return decay
'''
EMA_DOC = '''        """Move the shadow copy of each array of ``params`` (name -> array) towards it:
        ``shadow -= (1 - decay) * (shadow - value)``; a name seen for the first time gets a copy of its value. The
        decay is ``self.decay``, and with ``self.warmup`` at most ``(1 + n) / (10 + n)`` where n counts the
        updates, this one included. Returns the decay used."""
'''
EMA_GOLDEN = "\n\n" + EMA_HEAD + EMA_DOC + EMA_BODY
EMA_DRIVER = '''"""Train a linear regression by SGD and keep an EMA of its weights: python train.py"""

import numpy as np

from teacher.ema import WeightEMA


def main():
    rng = np.random.default_rng(0)
    true_w = rng.normal(size=(4, 2))
    params = {"w": np.zeros((4, 2)), "b": np.zeros(2)}
    ema = WeightEMA()
    for step in range(30):
        x = rng.normal(size=(16, 4))
        y = x @ true_w + 0.1 * rng.normal(size=(16, 2))
        err = x @ params["w"] + params["b"] - y
        params["w"] -= 0.05 * x.T @ err / len(x)
        params["b"] -= 0.05 * err.mean(axis=0)
        decay = ema.update(params)
        if step % 10 == 9:
            print(f"step {step}: decay {decay:.3f}, teacher |w| {np.abs(ema.shadow['w']).sum():.4f}")


if __name__ == "__main__":
    main()
'''

_ema = editor(EMA_HEAD, EMA_BODY)

EMA_WRONG = {
    "no warmup": _ema('''        if self.warmup:
            decay = min(decay, (1.0 + self.num_updates) / (10.0 + self.num_updates))
''', ""),
    "warmup flag ignored": _ema("        if self.warmup:\n            decay", "        if True:\n            decay"),
    "counted after the decay": _ema('''        self.num_updates += 1
        decay = self.decay
        if self.warmup:
            decay = min(decay, (1.0 + self.num_updates) / (10.0 + self.num_updates))
''', '''        decay = self.decay
        if self.warmup:
            decay = min(decay, (1.0 + self.num_updates) / (10.0 + self.num_updates))
        self.num_updates += 1
'''),
    "never counted": _ema("        self.num_updates += 1\n", ""),
    "max for min": _ema("decay = min(decay,", "decay = max(decay,"),
    "decay and its complement swapped": _ema("-= (1.0 - decay) * (", "-= decay * ("),
    "moves away from the weights": _ema("self.shadow[name] -= (1.0 - decay)", "self.shadow[name] += (1.0 - decay)"),
    "shadow holds the parameter itself": _ema("self.shadow[name] = np.array(value, copy=True)",
                                              "self.shadow[name] = value"),
}
EMA_RIGHT = {
    "new arrays each update": EMA_HEAD + '''        self.num_updates = self.num_updates + 1
        n = self.num_updates
        decay = min(self.decay, (n + 1) / (n + 10)) if self.warmup else self.decay
        for name in params:
            value = params[name]
            old = self.shadow.get(name)
            self.shadow[name] = value.copy() if old is None else decay * old + (1 - decay) * value
        return decay
''',
    "in place with numpy's out": EMA_HEAD + '''        self.num_updates += 1
        decay = self.decay
        if self.warmup and (1.0 + self.num_updates) / (10.0 + self.num_updates) < decay:
            decay = (1.0 + self.num_updates) / (10.0 + self.num_updates)
        for name, value in params.items():
            if name not in self.shadow:
                self.shadow[name] = np.copy(value)
                continue
            shadow = self.shadow[name]
            np.multiply(shadow, decay, out=shadow)
            shadow += (1.0 - decay) * value
        return decay
''',
}


def ema_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Sequences of ``update`` calls on general settings (warmup off, small decays, one update), the parameters
    changed in place between calls as SGD does; each gives the decays and the shadow arrays after them."""
    rng = np.random.default_rng(46)
    calls = []
    for decay, warmup, steps in ((0.999, True, 3), (0.9, False, 4), (0.5, True, 5), (0.99, True, 1),
                                 (0.7, False, 2)):
        start = {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}

        def call(d=decay, wu=warmup, n=steps, p0=start) -> object:
            ema = ns["WeightEMA"](d, wu)
            params = {k: v.copy() for k, v in p0.items()}
            decays = []
            for i in range(n):
                decays.append(ema.update(params))
                for value in params.values():
                    value -= 0.1 * (i + 1)
            return decays, [ema.shadow[k].copy() for k in sorted(ema.shadow)], ema.num_updates

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "21-DiceLoss", "files": {"seg/__init__.py": "", "seg/losses.py":
     '"""Segmentation losses."""\n\nimport numpy as np\n' + DL_GOLDEN, "segment.py": DL_DRIVER},
     "function": "seg/losses.py::dice_loss", "command": "python segment.py", "head": _NP, "wrong": DL_WRONG,
     "right": DL_RIGHT, "check": dl_check,
     "gaps": {"smooth only below": ["smooth"], "include_background ignored": ["include_background"],
              "squared ignored": ["squared"], "target not squared": ["target ** 2"],
              "sums over the batch too": ["axes"], "no factor 2": ["2.0 * inter"],
              "classes summed": ["dice.mean()"], "background dropped by the last class": ["include_background"]}},
    {"name": "22-WeightEMA", "files": {"teacher/__init__.py": "", "teacher/ema.py":
     '"""Mean-teacher weights."""\n\nimport numpy as np\n' + EMA_GOLDEN, "train.py": EMA_DRIVER},
     "function": "teacher/ema.py::WeightEMA.update", "command": "python train.py", "head": _NP,
     "wrong": EMA_WRONG, "right": EMA_RIGHT, "check": ema_check,
     "gaps": {"no warmup": ["warmup"], "warmup flag ignored": ["warmup"], "counted after the decay": ["num_updates"],
              "never counted": ["num_updates"], "max for min": ["min(decay"],
              "decay and its complement swapped": ["1.0 - decay"], "moves away from the weights": ["1.0 - decay"],
              "shadow holds the parameter itself": ["np.array(value, copy=True)"]}},
]
"""The third fresh held-out tasks."""
