"""A third held-out set for ``wrong_answers.py --set fresh2``: three numpy tasks of shapes that no other set
(``wrong_answer_tasks.py``, ``heldout_tasks.py``, ``heldout_fresh_tasks.py``) nor any test fixture has: CutMix of
an image batch whose random draws (the Beta-drawn ``lam``, the permutation, the box centre) are passed in and whose
box is clipped to the image, returning the mixed images, the mixed one-hot targets and the area-corrected ``lam``
(Yun et al. 2019); a Gumbel-softmax sample with a temperature and a straight-through ``hard`` flag the driver never
turns on, returning the sample and its backward pass as hand-written numpy layers do (Jang, Gu and Poole 2017);
and prioritized replay's importance-sampling weights, with priorities raised to ``alpha``, a ``beta`` annealed
linearly to 1 and capped there, and weights divided by the largest weight of the whole buffer (Schaul et al.
2016). Written for this benchmark alone, after the recorder was tuned, and kept out of tests/: no rule of the
recorder is tuned on them.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from corpus_edits import editor

# -- CutMix (Yun et al. 2019) -------------------------------------------------------------------------------------

CM_SIG = "def cutmix(images, labels, lam, perm, center, num_classes=10):\n"
CM_BODY = '''    _, _, height, width = images.shape
    cut = np.sqrt(1.0 - lam)
    cut_h, cut_w = int(height * cut), int(width * cut)
    cy, cx = center
    top = np.clip(cy - cut_h // 2, 0, height)
    bottom = np.clip(cy + cut_h // 2, 0, height)
    left = np.clip(cx - cut_w // 2, 0, width)
    right = np.clip(cx + cut_w // 2, 0, width)
    mixed = images.copy()
    mixed[:, :, top:bottom, left:right] = images[perm, :, top:bottom, left:right]
    lam_adj = 1.0 - (bottom - top) * (right - left) / (height * width)
    onehot = np.eye(num_classes)[labels]
    targets = lam_adj * onehot + (1.0 - lam_adj) * onehot[perm]
    return mixed, targets, float(lam_adj)
'''
CM_DOC = '''    """CutMix (Yun et al. 2019) of a batch. ``images`` (batch, channels, height, width); ``labels`` (batch,)
    class ids; ``lam`` a Beta(alpha, alpha) draw; ``perm`` a permutation of the batch; ``center`` the box centre as
    (row, column). The box is ``int(height * sqrt(1 - lam))`` rows by ``int(width * sqrt(1 - lam))`` columns: rows
    from ``row - h // 2`` to ``row + h // 2`` (end excluded), columns likewise, each bound clipped to the image.
    Image i gets the box from image ``perm[i]``. ``lam_adj`` is 1 minus the clipped box's share of the image; the
    targets are ``lam_adj`` times the one-hot (``num_classes``) label plus ``1 - lam_adj`` times the partner's.
    ``images`` is left unchanged. Returns (mixed images, targets, lam_adj)."""
'''
CM_GOLDEN = "\n\n" + CM_SIG + CM_DOC + CM_BODY
CM_DRIVER = '''"""Train a toy linear classifier on CutMix batches of random images: python train.py"""

import numpy as np

from augment.mix import cutmix


def main():
    rng = np.random.default_rng(0)
    classes, size = 10, 16
    weights = np.zeros((3 * size * size, classes))
    for step in range(4):
        images = rng.normal(size=(8, 3, size, size))
        labels = rng.integers(0, classes, size=8)
        lam = rng.beta(1.0, 1.0)
        perm = rng.permutation(8)
        center = (int(rng.integers(size)), int(rng.integers(size)))
        mixed, targets, lam_adj = cutmix(images, labels, lam, perm, center)
        logits = mixed.reshape(8, -1) @ weights
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        weights -= 0.01 * mixed.reshape(8, -1).T @ (probs - targets) / 8
        loss = -np.mean(np.sum(targets * np.log(probs), axis=1))
        print(f"step {step}: lam {lam_adj:.3f}, loss {loss:.4f}")


if __name__ == "__main__":
    main()
'''


_cm = editor(CM_SIG, CM_BODY)


CM_WRONG = {
    "lam not corrected for the clipped box": _cm("return mixed, targets, float(lam_adj)",
                                                 "return mixed, targets, float(lam)").replace(
        "    lam_adj = 1.0 - (bottom - top) * (right - left) / (height * width)\n", "    lam_adj = lam\n"),
    "no square root": _cm("cut = np.sqrt(1.0 - lam)", "cut = 1.0 - lam"),
    "box sized by lam": _cm("cut = np.sqrt(1.0 - lam)", "cut = np.sqrt(lam)"),
    "centre read as (x, y)": _cm("cy, cx = center", "cx, cy = center"),
    "box not clipped": _cm('''    top = np.clip(cy - cut_h // 2, 0, height)
    bottom = np.clip(cy + cut_h // 2, 0, height)
    left = np.clip(cx - cut_w // 2, 0, width)
    right = np.clip(cx + cut_w // 2, 0, width)
''', '''    top, bottom = cy - cut_h // 2, cy + cut_h // 2
    left, right = cx - cut_w // 2, cx + cut_w // 2
'''),
    "targets mixed the other way": _cm("targets = lam_adj * onehot + (1.0 - lam_adj) * onehot[perm]",
                                       "targets = (1.0 - lam_adj) * onehot + lam_adj * onehot[perm]"),
    "changes the caller's batch": _cm("mixed = images.copy()", "mixed = images"),
    "classes from the labels": _cm("onehot = np.eye(num_classes)[labels]",
                                   "onehot = np.eye(int(labels.max()) + 1)[labels]"),
    "box size rounded": _cm("cut_h, cut_w = int(height * cut), int(width * cut)",
                            "cut_h, cut_w = int(round(height * cut)), int(round(width * cut))"),
}
CM_RIGHT = {
    "boolean box mask": CM_SIG + '''    n, c, h, w = images.shape
    side = (1.0 - lam) ** 0.5
    bh, bw = int(h * side), int(w * side)
    rows = np.arange(h)
    cols = np.arange(w)
    in_rows = (rows >= center[0] - bh // 2) & (rows < center[0] + bh // 2)
    in_cols = (cols >= center[1] - bw // 2) & (cols < center[1] + bw // 2)
    box = in_rows[:, None] & in_cols[None, :]
    mixed = np.where(box, images[perm], images)
    kept = 1.0 - box.sum() / (h * w)
    eye = np.eye(num_classes)
    targets = kept * eye[labels] + (1.0 - kept) * eye[labels[perm]]
    return mixed, targets, float(kept)
''',
    "image by image": CM_SIG + '''    height, width = images.shape[2], images.shape[3]
    frac = float(np.sqrt(1 - lam))
    half_h, half_w = int(height * frac) // 2, int(width * frac) // 2
    r0, r1 = max(center[0] - half_h, 0), min(center[0] + half_h, height)
    c0, c1 = max(center[1] - half_w, 0), min(center[1] + half_w, width)
    r1, c1 = max(r1, r0), max(c1, c0)
    out = np.empty_like(images)
    soft = np.zeros((len(labels), num_classes))
    area = (r1 - r0) * (c1 - c0) / (height * width)
    for i, j in enumerate(perm):
        out[i] = images[i]
        out[i, :, r0:r1, c0:c1] = images[j, :, r0:r1, c0:c1]
        soft[i, labels[i]] += 1.0 - area
        soft[i, labels[j]] += area
    return out, soft, 1.0 - area
''',
}


def cm_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``cutmix`` on general inputs: non-square images, boxes at a corner and in the middle, lam near 0
    and 1, labels below ``num_classes``; each returns the result and the input batch after the call."""
    rng = np.random.default_rng(46)
    f = ns["cutmix"]
    calls = []
    for shape, lam, center, classes in (((4, 2, 6, 10), 0.3, (1, 8), 7), ((5, 1, 9, 9), 0.55, (4, 4), 12),
                                        ((3, 3, 8, 5), 0.05, (7, 0), 4), ((4, 1, 12, 7), 0.8, (6, 3), 5),
                                        ((2, 2, 5, 11), 0.37, (0, 10), 6)):
        images = rng.normal(size=shape)
        labels = rng.integers(0, classes - 1, size=shape[0])
        perm = rng.permutation(shape[0])

        def call(x=images, y=labels, lam=lam, p=perm, c=center, k=classes) -> object:
            mine = x.copy()
            return f(mine, y, lam, p, c, k), mine

        calls.append(call)
    return calls


# -- Gumbel-softmax (Jang, Gu and Poole 2017) ---------------------------------------------------------------------

GS_SIG = "def gumbel_softmax(logits, uniform, grad_out, tau=1.0, hard=False, eps=1e-10):\n"
GS_BODY = '''    noise = -np.log(-np.log(uniform + eps) + eps)
    z = (logits + noise) / tau
    z = z - z.max(axis=-1, keepdims=True)
    soft = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    if hard:
        sample = np.eye(logits.shape[-1])[soft.argmax(axis=-1)]
    else:
        sample = soft
    dot = (grad_out * soft).sum(axis=-1, keepdims=True)
    grad = soft * (grad_out - dot) / tau
    return sample, grad
'''
GS_DOC = '''    """A Gumbel-softmax sample (Jang et al. 2017) of ``logits`` (batch, classes) and its backward pass.
    ``uniform`` (batch, classes) holds U(0, 1) draws, made Gumbel noise as ``-log(-log(uniform + eps) + eps)``;
    ``soft = softmax((logits + noise) / tau)`` over the classes. With ``hard``, the sample is the one-hot of each
    row's argmax of ``soft`` and its gradient is passed straight through to ``soft``; otherwise the sample is
    ``soft``. ``grad_out`` (batch, classes) is the upstream gradient of the sample. Returns (sample, gradient of
    the loss with respect to ``logits``)."""
'''
GS_GOLDEN = "\n\n" + GS_SIG + GS_DOC + GS_BODY
GS_DRIVER = '''"""Fit a categorical distribution to a target by Gumbel-softmax gradients: python fit.py"""

import numpy as np

from relax.gumbel import gumbel_softmax


def main():
    rng = np.random.default_rng(0)
    target = np.array([0.1, 0.6, 0.2, 0.1])
    logits = np.zeros((16, 4))
    for step in range(5):
        uniform = rng.random(logits.shape)
        sample, _ = gumbel_softmax(logits, uniform, np.zeros_like(logits))
        grad_out = 2.0 * (sample - target) / len(sample)
        _, grad = gumbel_softmax(logits, uniform, grad_out)
        logits -= 1.0 * grad
        print(f"step {step}: loss {np.mean(np.sum((sample - target) ** 2, axis=1)):.4f}")


if __name__ == "__main__":
    main()
'''


_gs = editor(GS_SIG, GS_BODY)


GS_WRONG = {
    "noise sign flipped": _gs("noise = -np.log(-np.log(uniform + eps) + eps)",
                              "noise = np.log(-np.log(uniform + eps) + eps)"),
    "temperature on the logits only": _gs("z = (logits + noise) / tau", "z = logits / tau + noise"),
    "no 1/tau in the backward": _gs("grad = soft * (grad_out - dot) / tau", "grad = soft * (grad_out - dot)"),
    "hard ignored": _gs('''    if hard:
        sample = np.eye(logits.shape[-1])[soft.argmax(axis=-1)]
    else:
        sample = soft
''', "    sample = soft\n"),
    "hard argmax of the clean logits": _gs("[soft.argmax(axis=-1)]", "[logits.argmax(axis=-1)]"),
    "no gradient through the hard sample": _gs("    return sample, grad\n",
                                               "    if hard:\n        grad = np.zeros_like(grad)\n"
                                               "    return sample, grad\n"),
    "no max shift": _gs("    z = z - z.max(axis=-1, keepdims=True)\n", ""),
    "eps dropped": _gs("noise = -np.log(-np.log(uniform + eps) + eps)", "noise = -np.log(-np.log(uniform))"),
    "softmax backward without the dot term": _gs("grad = soft * (grad_out - dot) / tau",
                                                 "grad = soft * grad_out / tau"),
}
GS_RIGHT = {
    "log-sum-exp and a Jacobian": GS_SIG + '''    g = -np.log(eps - np.log(eps + uniform))
    y = (logits + g) / tau
    m = y.max(axis=-1, keepdims=True)
    log_soft = y - m - np.log(np.sum(np.exp(y - m), axis=-1, keepdims=True))
    soft = np.exp(log_soft)
    out = soft
    if hard:
        out = (soft == soft.max(axis=-1, keepdims=True)).astype(float)
        first = np.cumsum(out, axis=-1) == 1
        out = out * first
    jac = (soft[:, :, None] * np.eye(soft.shape[-1])[None] - soft[:, :, None] * soft[:, None, :]) / tau
    grad = np.einsum("bi,bij->bj", grad_out, jac)
    return out, grad
''',
    "row by row": GS_SIG + '''    samples, grads = [], []
    for row, u, up in zip(logits, uniform, grad_out):
        noisy = [(a - np.log(-np.log(b + eps) + eps)) / tau for a, b in zip(row, u)]
        top = max(noisy)
        e = [np.exp(v - top) for v in noisy]
        total = sum(e)
        p = np.array([v / total for v in e])
        if hard:
            one = np.zeros(len(p))
            one[int(np.argmax(p))] = 1.0
            samples.append(one)
        else:
            samples.append(p)
        mean_up = float(np.dot(up, p))
        grads.append(np.array([pi * (ui - mean_up) / tau for pi, ui in zip(p, up)]))
    return np.array(samples), np.array(grads)
''',
}


def gs_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``gumbel_softmax`` on general inputs: temperatures above and below 1, hard and soft, a tiny
    temperature on large logits, uniform draws of exactly 0 (``random()`` can return 0, never 1)."""
    rng = np.random.default_rng(46)
    f = ns["gumbel_softmax"]
    calls = []
    for tau, hard, scale, edges in ((1.0, False, 1.0, False), (0.5, True, 2.0, False), (2.5, False, 1.0, True),
                                    (0.01, True, 10.0, False), (0.3, False, 3.0, False), (1.7, True, 1.0, True)):
        logits = rng.normal(scale=scale, size=(4, 5))
        uniform = rng.random((4, 5))
        if edges:
            uniform[0, 1], uniform[2, 3] = 0.0, 0.0
        grad_out = rng.normal(size=(4, 5))
        calls.append(lambda a=(logits, uniform, grad_out), k=(tau, hard): f(*a, *k))
    return calls


# -- prioritized replay's importance-sampling weights (Schaul et al. 2016) ----------------------------------------

PR_SIG = "def importance_weights(priorities, indices, step, alpha=0.6, beta_start=0.4, beta_steps=100_000, eps=1e-6):\n"
PR_BODY = '''    scaled = (priorities + eps) ** alpha
    probs = scaled / scaled.sum()
    beta = min(1.0, beta_start + step * (1.0 - beta_start) / beta_steps)
    size = len(priorities)
    weights = (size * probs[indices]) ** (-beta)
    max_weight = (size * probs.min()) ** (-beta)
    return weights / max_weight, beta
'''
PR_DOC = '''    """Importance-sampling weights of prioritized experience replay (Schaul et al. 2016). ``priorities``
    (size,) are the stored transitions' non-negative priorities, ``indices`` (batch,) the sampled ones, ``step``
    the training step. P(i) is ``(priorities[i] + eps) ** alpha`` over its sum on the whole buffer; beta grows
    linearly from ``beta_start`` at step 0 to 1 at ``beta_steps`` and stays 1 after. A sampled transition's weight
    is ``(size * P(i)) ** -beta``, divided by the largest weight any stored transition can have (that of the
    smallest P). Returns (weights (batch,), beta)."""
'''
PR_GOLDEN = "\n\n" + PR_SIG + PR_DOC + PR_BODY
PR_DRIVER = '''"""Replay toy TD errors from a prioritized buffer and weigh the sampled batches: python learn.py"""

import numpy as np

from replay.weights import importance_weights


def main():
    rng = np.random.default_rng(0)
    priorities = np.abs(rng.normal(size=64)) + 0.01
    for step in range(0, 2000, 400):
        scaled = priorities ** 0.6
        indices = rng.choice(64, size=8, p=scaled / scaled.sum())
        weights, beta = importance_weights(priorities, indices, step)
        td = rng.normal(size=8)
        priorities[indices] = np.abs(td)
        print(f"step {step}: beta {beta:.4f}, weighted loss {np.mean(weights * td ** 2):.4f}")


if __name__ == "__main__":
    main()
'''


_pr = editor(PR_SIG, PR_BODY)


PR_WRONG = {
    "normalised by the batch's largest weight": _pr("    max_weight = (size * probs.min()) ** (-beta)\n",
                                                   "    max_weight = weights.max()\n"),
    "beta never capped": _pr("beta = min(1.0, beta_start + step * (1.0 - beta_start) / beta_steps)",
                             "beta = beta_start + step * (1.0 - beta_start) / beta_steps"),
    "alpha ignored": _pr("scaled = (priorities + eps) ** alpha", "scaled = priorities + eps"),
    "eps dropped": _pr("scaled = (priorities + eps) ** alpha", "scaled = priorities ** alpha"),
    "positive exponent": _pr("weights = (size * probs[indices]) ** (-beta)\n    max_weight = (size * probs.min()) "
                             "** (-beta)", "weights = (size * probs[indices]) ** beta\n    max_weight = (size * "
                             "probs.max()) ** beta"),
    "beta_start ignored": _pr("beta = min(1.0, beta_start + step * (1.0 - beta_start) / beta_steps)",
                              "beta = min(1.0, step / beta_steps)"),
    "max weight without alpha": _pr("max_weight = (size * probs.min()) ** (-beta)",
                                    "max_weight = (size * (priorities.min() + eps) / (priorities + eps).sum()) "
                                    "** (-beta)"),
    "max weight from the largest priority": _pr("probs.min()", "probs.max()"),
    "pins beta_steps": _pr("/ beta_steps)", "/ 100_000)"),
}
PR_RIGHT = {
    "log space": PR_SIG + '''    log_p = alpha * np.log(np.asarray(priorities, dtype=float) + eps)
    log_p -= np.log(np.sum(np.exp(log_p)))
    frac = min(step / beta_steps, 1.0)
    beta = beta_start + frac * (1.0 - beta_start) if step < beta_steps else 1.0
    w = np.exp(-beta * (log_p[indices] - log_p.min()))
    return w, beta
''',
    "a loop and a running minimum": PR_SIG + '''    total = 0.0
    smallest = float("inf")
    for p in priorities:
        v = (float(p) + eps) ** alpha
        total += v
        smallest = min(smallest, v)
    beta = beta_start + (1.0 - beta_start) * step / beta_steps
    beta = 1.0 if beta > 1.0 else beta
    n = len(priorities)
    worst = (n * smallest / total) ** -beta
    out = np.array([(n * (float(priorities[i]) + eps) ** alpha / total) ** -beta / worst for i in indices])
    return out, beta
''',
}


def pr_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``importance_weights`` on general inputs: other alphas, beta starts and horizons, steps before
    and after the horizon, zero priorities, repeated indices."""
    rng = np.random.default_rng(46)
    f = ns["importance_weights"]
    calls = []
    for step, alpha, beta_start, beta_steps, zeros in ((0, 0.6, 0.4, 100_000, False), (150, 0.7, 0.5, 100, True),
                                                      (30, 1.0, 0.2, 50, False), (500, 0.5, 0.4, 1000, True),
                                                      (40, 0.3, 0.0, 80, False)):
        priorities = np.abs(rng.normal(size=20))
        if zeros:
            priorities[[2, 11]] = 0.0
        indices = rng.integers(0, 20, size=6)
        calls.append(lambda a=(priorities, indices, step), k=(alpha, beta_start, beta_steps): f(*a, *k))
    return calls


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "18-CutMix", "files": {"augment/__init__.py": "", "augment/mix.py":
     '"""Batch mixing augmentations."""\n\nimport numpy as np\n' + CM_GOLDEN, "train.py": CM_DRIVER},
     "function": "augment/mix.py::cutmix", "command": "python train.py", "head": _NP, "wrong": CM_WRONG,
     "right": CM_RIGHT, "check": cm_check,
     "gaps": {"lam not corrected for the clipped box": ["lam_adj"], "no square root": ["np.sqrt(1.0 - lam)"],
              "box sized by lam": ["np.sqrt(1.0 - lam)"], "centre read as (x, y)": ["cy, cx = center"],
              "box not clipped": ["np.clip"], "targets mixed the other way": ["onehot[perm]"],
              "changes the caller's batch": ["images.copy()"], "classes from the labels": ["num_classes"],
              "box size rounded": ["int(height * cut)"]}},
    {"name": "19-GumbelSoftmax", "files": {"relax/__init__.py": "", "relax/gumbel.py":
     '"""Continuous relaxations of discrete samples."""\n\nimport numpy as np\n' + GS_GOLDEN, "fit.py": GS_DRIVER},
     "function": "relax/gumbel.py::gumbel_softmax", "command": "python fit.py", "head": _NP, "wrong": GS_WRONG,
     "right": GS_RIGHT, "check": gs_check,
     "gaps": {"noise sign flipped": ["-np.log(-np.log(uniform + eps) + eps)"],
              "temperature on the logits only": ["(logits + noise) / tau"],
              "no 1/tau in the backward": ["tau"], "hard ignored": ["hard"],
              "hard argmax of the clean logits": ["soft.argmax(axis=-1)"],
              "no gradient through the hard sample": ["hard"],
              "no max shift": ["z.max(axis=-1, keepdims=True)"], "eps dropped": ["eps"],
              "softmax backward without the dot term": ["grad_out - dot"]}},
    {"name": "20-PERWeights", "files": {"replay/__init__.py": "", "replay/weights.py":
     '"""Prioritized replay."""\n\nimport numpy as np\n' + PR_GOLDEN, "learn.py": PR_DRIVER},
     "function": "replay/weights.py::importance_weights", "command": "python learn.py", "head": _NP,
     "wrong": PR_WRONG, "right": PR_RIGHT, "check": pr_check,
     "gaps": {"normalised by the batch's largest weight": ["probs.min()"], "beta never capped": ["min(1.0"],
              "alpha ignored": ["alpha"], "eps dropped": ["eps"], "positive exponent": ["(-beta)"],
              "beta_start ignored": ["beta_start"], "max weight without alpha": ["probs.min()"],
              "max weight from the largest priority": ["probs.min()"], "pins beta_steps": ["beta_steps"]}},
]
"""The second fresh held-out tasks."""
