"""A fifth held-out set for ``wrong_answers.py --set fresh4``: three numpy tasks of shapes that no other set nor any
test fixture has. The first is the Lookahead optimiser (Zhang, Lucas, Hinton and Ba 2019), a wrapper whose step runs
an inner SGD with momentum and every k steps pulls its own slow copy of the weights towards the fast ones and writes
the result back into the inner optimiser's parameters, which the model holds; an option to zero the inner momentum
at each synchronisation is never taken by the driver. The second is the expected calibration error with equal-width
confidence bins, each closed on the right, an empty-bin guard and a maximum (MCE) norm the driver never asks for
(Guo, Pleiss, Sun and Weinberger 2017). The third is a mixture-of-experts top-k router reading its nested config
(``self.cfg.moe.*``): gates renormalised over the chosen experts, an expert capacity from a capacity factor with a
floor the driver never reaches, first choices placed before second ones, and the Switch load-balancing auxiliary
loss (Shazeer et al. 2017; Lepikhin et al. 2021; Fedus, Zoph and Shazeer 2021). Written before any further rule of
the recorder, and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

# -- Lookahead (Zhang et al. 2019) --------------------------------------------------------------------------------

LA_SGD = '''"""Plain optimisers over lists of numpy arrays, changed in place."""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class SGD:
    """SGD with heavy-ball momentum: ``v = momentum * v + g``, ``p -= lr * v``."""

    params: list
    lr: float = 0.01
    momentum: float = 0.9
    velocity: list = field(default_factory=list)

    def __post_init__(self):
        if not self.velocity:
            self.velocity = [np.zeros_like(p) for p in self.params]

    def step(self, grads):
        for p, v, g in zip(self.params, self.velocity, grads):
            v *= self.momentum
            v += g
            p -= self.lr * v
'''
LA_HEAD = '''class Lookahead:
    """Lookahead (Zhang et al. 2019) around an inner optimiser whose ``params`` and ``velocity`` it reads."""

    def __init__(self, optimizer, k=5, alpha=0.5, reset_momentum=False):
        self.optimizer = optimizer
        self.k = k
        self.alpha = alpha
        self.reset_momentum = reset_momentum
        self.step_count = 0
        self.slow = None

    def step(self, grads):
'''
LA_BODY = '''        if self.slow is None:
            self.slow = [np.array(p, copy=True) for p in self.optimizer.params]
        self.optimizer.step(grads)
        self.step_count += 1
        if self.step_count % self.k != 0:
            return False
        for slow, fast in zip(self.slow, self.optimizer.params):
            slow += self.alpha * (fast - slow)
            fast[...] = slow
        if self.reset_momentum:
            for buf in self.optimizer.velocity:
                buf[...] = 0.0
        return True
'''
LA_DOC = '''        """One Lookahead step. The slow weights are this wrapper's own copies of the inner optimiser's
        ``params`` as they were before the first call. Runs the inner optimiser's step on ``grads``; then on every
        ``k``-th call (the k-th, the 2k-th, ...) moves each slow array towards its fast one,
        ``slow += alpha * (fast - slow)``, and writes the result into the fast array in place (the model holds the
        fast arrays); with ``reset_momentum`` the inner optimiser's ``velocity`` buffers are zeroed then too.
        Returns True on a call that synchronised, False otherwise."""
'''
LA_GOLDEN = "\n\n" + LA_HEAD + LA_DOC + LA_BODY
LA_DRIVER = '''"""Fit a linear model with Lookahead around SGD with momentum: python train.py"""

import numpy as np

from optim.lookahead import Lookahead
from optim.sgd import SGD


class Linear:
    def __init__(self, rng, n_in, n_out):
        self.w = 0.1 * rng.normal(size=(n_in, n_out))
        self.b = np.zeros(n_out)

    def params(self):
        return [self.w, self.b]


def main():
    rng = np.random.default_rng(0)
    model = Linear(rng, 5, 2)
    true_w = rng.normal(size=(5, 2))
    optimizer = Lookahead(SGD(model.params(), lr=0.05, momentum=0.9))
    for step in range(12):
        x = rng.normal(size=(32, 5))
        y = x @ true_w + 0.05 * rng.normal(size=(32, 2))
        err = x @ model.w + model.b - y
        grads = [x.T @ err / len(x), err.mean(axis=0)]
        synced = optimizer.step(grads)
        loss = float(np.mean((x @ model.w + model.b - y) ** 2))
        print(f"step {step}: loss {loss:.4f}{' (synced)' if synced else ''}")


if __name__ == "__main__":
    main()
'''

_la = editor(LA_HEAD, LA_BODY)

LA_WRONG = {
    "pins k": _la("self.step_count % self.k != 0", "self.step_count % 5 != 0"),
    "pins alpha": _la("slow += self.alpha * (fast - slow)", "slow += 0.5 * (fast - slow)"),
    "alpha and its complement swapped": _la("slow += self.alpha * (fast - slow)",
                                            "slow += (1.0 - self.alpha) * (fast - slow)"),
    "slow weights alias the parameters": _la("self.slow = [np.array(p, copy=True) for p in self.optimizer.params]",
                                             "self.slow = list(self.optimizer.params)"),
    "slow weights taken after the first inner step": _la('''        if self.slow is None:
            self.slow = [np.array(p, copy=True) for p in self.optimizer.params]
        self.optimizer.step(grads)
''', '''        self.optimizer.step(grads)
        if self.slow is None:
            self.slow = [np.array(p, copy=True) for p in self.optimizer.params]
'''),
    "fast weights not reset": _la("            fast[...] = slow\n", ""),
    "fast weights replaced by new arrays": _la('''        for slow, fast in zip(self.slow, self.optimizer.params):
            slow += self.alpha * (fast - slow)
            fast[...] = slow
''', '''        for i, (slow, fast) in enumerate(zip(self.slow, self.optimizer.params)):
            slow += self.alpha * (fast - slow)
            self.optimizer.params[i] = slow.copy()
'''),
    "synchronises on the first call": _la('''        self.step_count += 1
        if self.step_count % self.k != 0:
            return False
''', '''        due = self.step_count % self.k == 0
        self.step_count += 1
        if not due:
            return False
'''),
    "reset_momentum ignored": _la('''        if self.reset_momentum:
            for buf in self.optimizer.velocity:
                buf[...] = 0.0
''', ""),
}
LA_RIGHT = {
    "new slow arrays and np.copyto": LA_HEAD + '''        fast_params = self.optimizer.params
        if self.slow is None:
            self.slow = [p.copy() for p in fast_params]
        self.optimizer.step(grads)
        self.step_count += 1
        synced = self.step_count % self.k == 0
        if synced:
            a = self.alpha
            self.slow = [(1.0 - a) * s + a * f for s, f in zip(self.slow, fast_params)]
            for s, f in zip(self.slow, fast_params):
                np.copyto(f, s)
            if self.reset_momentum:
                for v in self.optimizer.velocity:
                    v.fill(0.0)
        return synced
''',
    "index loop with slices": LA_HEAD + '''        params = self.optimizer.params
        if self.slow is None:
            self.slow = []
            for p in params:
                self.slow.append(np.empty_like(p))
                self.slow[-1][...] = p
        self.optimizer.step(grads)
        self.step_count = self.step_count + 1
        if self.step_count % self.k:
            return False
        for i in range(len(params)):
            self.slow[i][...] = self.slow[i] + self.alpha * (params[i] - self.slow[i])
            params[i][...] = self.slow[i]
            if self.reset_momentum:
                self.optimizer.velocity[i][...] = 0
        return True
''',
}


class _SGD:
    """The inner optimiser of ``la_check`` (the repository's SGD with momentum)."""

    def __init__(self, params: list[np.ndarray], lr: float, momentum: float) -> None:
        self.params, self.lr, self.momentum = params, lr, momentum
        self.velocity = [np.zeros_like(p) for p in params]

    def step(self, grads: list[np.ndarray]) -> None:
        for p, v, g in zip(self.params, self.velocity, grads, strict=True):
            v *= self.momentum
            v += g
            p -= self.lr * v


def la_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Sequences of ``step`` calls on general settings (k of 1, 2, 3, alpha other than 0.5, momentum reset on),
    each giving the returned flags, the caller's parameter arrays, the slow weights, the velocities and the count."""
    rng = np.random.default_rng(46)
    calls = []
    for k, alpha, reset, steps in ((3, 0.8, False, 7), (2, 0.3, True, 5), (1, 0.5, False, 3), (4, 0.5, True, 9),
                                   (5, 0.25, False, 11)):
        start = [rng.normal(size=(3, 2)), rng.normal(size=4)]
        grads = [[rng.normal(size=(3, 2)), rng.normal(size=4)] for _ in range(steps)]

        def call(k=k, alpha=alpha, reset=reset, start=start, grads=grads) -> object:
            held = [p.copy() for p in start]  # the model's arrays; the inner optimiser gets a list of them
            inner = _SGD(list(held), 0.1, 0.9)
            la = ns["Lookahead"](inner, k, alpha, reset)
            flags = [bool(la.step(g)) for g in grads]
            return (flags, [p.copy() for p in held], [s.copy() for s in la.slow],
                    [v.copy() for v in inner.velocity], la.step_count)

        calls.append(call)
    return calls


# -- Expected calibration error (Guo et al. 2017) -----------------------------------------------------------------

CE_SIG = "def calibration_error(probs, labels, n_bins=15, norm=\"l1\"):\n"
CE_BODY = '''    confidences = probs.max(axis=1)
    accuracies = (probs.argmax(axis=1) == labels).astype(float)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    total = len(confidences)
    ece, mce = 0.0, 0.0
    for lower, upper in zip(edges[:-1], edges[1:]):
        in_bin = (confidences > lower) & (confidences <= upper)
        count = int(in_bin.sum())
        if count == 0:
            continue
        gap = abs(accuracies[in_bin].mean() - confidences[in_bin].mean())
        ece += count / total * gap
        mce = max(mce, gap)
    if norm == "l1":
        return float(ece)
    if norm == "max":
        return float(mce)
    raise ValueError(f"unknown norm {norm!r}")
'''
CE_DOC = '''    """Calibration error of a classifier's ``probs`` (samples, classes; each row a distribution) against
    integer ``labels`` (samples,). A sample's confidence is its largest probability and it is correct when the
    argmax is its label. The confidences fall into ``n_bins`` (at least 1) equal-width bins of [0, 1], each open on
    the left and closed on the right ((0, 1/n], (1/n, 2/n], ...); an empty bin counts for nothing. Per bin the gap
    is |accuracy - mean confidence|. ``norm="l1"`` gives the expected calibration error (the gaps weighted by the
    share of samples in each bin), ``norm="max"`` the maximum calibration error (the largest gap of a non-empty
    bin); another norm raises ValueError."""
'''
CE_GOLDEN = "\n\n" + CE_SIG + CE_DOC + CE_BODY
CE_DRIVER = '''"""Measure how calibration changes with temperature scaling of a toy classifier: python evaluate.py"""

import numpy as np

from calib.metrics import calibration_error


def main():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, size=500)
    logits = rng.normal(size=(500, 10))
    logits[np.arange(500), labels] += 2.0
    for temperature in (0.5, 1.0, 2.0):
        z = logits / temperature
        probs = np.exp(z - z.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        ece = calibration_error(probs, labels)
        print(f"temperature {temperature}: ECE {ece:.4f}")


if __name__ == "__main__":
    main()
'''

_ce = editor(CE_SIG, CE_BODY)

CE_WRONG = {
    "pins n_bins": _ce("edges = np.linspace(0.0, 1.0, n_bins + 1)", "edges = np.linspace(0.0, 1.0, 16)"),
    "one bin too few": _ce("edges = np.linspace(0.0, 1.0, n_bins + 1)", "edges = np.linspace(0.0, 1.0, n_bins)"),
    "bins closed on the left": _ce("(confidences > lower) & (confidences <= upper)",
                                   "(confidences >= lower) & (confidences < upper)"),
    "empty-bin guard dropped": _ce("        if count == 0:\n            continue\n", ""),
    "bins weighted equally": _ce('''    ece, mce = 0.0, 0.0
''', '''    ece, mce = 0.0, 0.0
    filled = int(sum(((confidences > lo) & (confidences <= hi)).any() for lo, hi in zip(edges[:-1], edges[1:])))
''').replace("ece += count / total * gap", "ece += gap / filled"),
    "confidence of the true class": _ce("confidences = probs.max(axis=1)",
                                        "confidences = probs[np.arange(len(labels)), labels]"),
    "signed gap": _ce("gap = abs(accuracies[in_bin].mean() - confidences[in_bin].mean())",
                      "gap = accuracies[in_bin].mean() - confidences[in_bin].mean()"),
    "norm ignored": _ce('''    if norm == "l1":
        return float(ece)
    if norm == "max":
        return float(mce)
    raise ValueError(f"unknown norm {norm!r}")
''', '''    return float(ece)
'''),
    "maximum of the weighted gaps": _ce("mce = max(mce, gap)", "mce = max(mce, count / total * gap)"),
}
CE_RIGHT = {
    "digitize and bincount": CE_SIG + '''    if norm not in ("l1", "max"):
        raise ValueError(norm)
    conf = np.max(probs, axis=1)
    hit = np.argmax(probs, axis=1) == labels
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.digitize(conf, edges[1:-1], right=True)
    counts = np.bincount(idx, minlength=n_bins)
    conf_sum = np.bincount(idx, weights=conf, minlength=n_bins)
    hit_sum = np.bincount(idx, weights=hit.astype(float), minlength=n_bins)
    full = counts > 0
    gaps = np.abs(hit_sum[full] - conf_sum[full]) / counts[full]
    if norm == "max":
        return float(gaps.max())
    return float(np.sum(gaps * counts[full]) / len(conf))
''',
    "samples grouped by searchsorted": CE_SIG + '''    edges = np.linspace(0.0, 1.0, n_bins + 1)
    groups = {}
    for row, label in zip(probs, labels):
        c = row.max()
        b = int(np.searchsorted(edges, c, side="left")) - 1
        groups.setdefault(b, []).append((c, float(row.argmax() == label)))
    gaps = {}
    for b, items in groups.items():
        cs, acc = zip(*items)
        gaps[b] = (len(items), abs(np.mean(acc) - np.mean(cs)))
    if norm == "max":
        return float(max(g for _, g in gaps.values()))
    if norm == "l1":
        return float(sum(n * g for n, g in gaps.values()) / len(probs))
    raise ValueError("norm must be l1 or max")
''',
}


def ce_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``calibration_error`` on general inputs: other bin counts, both norms, confidences exactly on bin
    edges (1.0 included), two-class and many-class probabilities, and an unknown norm."""
    rng = np.random.default_rng(46)
    f = ns["calibration_error"]
    calls = []
    for n, classes, n_bins, norm, on_edges in ((60, 4, 10, "l1", True), (40, 2, 5, "max", True),
                                               (80, 6, 15, "l1", False), (30, 3, 7, "max", False),
                                               (50, 2, 4, "l1", True), (20, 5, 10, "l2", False)):
        logits = rng.normal(scale=2.0, size=(n, classes))
        probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        if on_edges:  # rows whose top probability is a bin edge: on an upper bound, 1.0 among them
            edges = np.linspace(0.0, 1.0, n_bins + 1)
            for row, edge in enumerate(e for e in edges if e > 0.5):
                probs[row] = 0.0
                probs[row, row % classes] = edge
                probs[row, (row + 1) % classes] = 1.0 - edge
        labels = np.where(rng.random(n) < 0.7, probs.argmax(axis=1), rng.integers(0, classes, size=n))
        calls.append(lambda p=probs, y=labels, k=(n_bins, norm): f(p, y, *k))
    return calls


# -- Mixture-of-experts top-k router (Shazeer et al. 2017; Fedus et al. 2021) ------------------------------------

MOE_CONFIG = '''"""Model configuration."""

from dataclasses import dataclass, field


@dataclass
class MoEConfig:
    num_experts: int = 4
    top_k: int = 2
    capacity_factor: float = 1.25
    min_capacity: int = 4
    normalize_gates: bool = True
    aux_loss_coef: float = 0.01


@dataclass
class ModelConfig:
    d_model: int = 8
    moe: MoEConfig = field(default_factory=MoEConfig)
'''
MOE_HEAD = '''class TopKRouter:
    """The router of a mixture-of-experts layer, configured by ``cfg`` (see config.py)."""

    def __init__(self, cfg, seed=0):
        self.cfg = cfg
        rng = np.random.default_rng(seed)
        self.w_gate = rng.normal(scale=cfg.d_model ** -0.5, size=(cfg.d_model, cfg.moe.num_experts))

    @staticmethod
    def _softmax(logits):
        shifted = logits - logits.max(axis=-1, keepdims=True)
        e = np.exp(shifted)
        return e / e.sum(axis=-1, keepdims=True)

    def route(self, tokens):
'''
MOE_BODY = '''        moe = self.cfg.moe
        probs = self._softmax(tokens @ self.w_gate)
        n, num_experts = probs.shape
        top = np.argsort(-probs, axis=1, kind="stable")[:, :moe.top_k]
        gates = np.take_along_axis(probs, top, axis=1)
        if moe.normalize_gates:
            gates = gates / gates.sum(axis=1, keepdims=True)
        capacity = max(math.ceil(moe.capacity_factor * n * moe.top_k / num_experts), moe.min_capacity)
        load = np.zeros(num_experts, dtype=int)
        combine = np.zeros((n, num_experts))
        for rank in range(moe.top_k):
            for i in range(n):
                expert = top[i, rank]
                if load[expert] < capacity:
                    combine[i, expert] = gates[i, rank]
                    load[expert] += 1
        first_share = np.bincount(top[:, 0], minlength=num_experts) / n
        aux = moe.aux_loss_coef * num_experts * float(np.sum(first_share * probs.mean(axis=0)))
        return combine, aux
'''
MOE_DOC = '''        """Route ``tokens`` (n, d_model) to experts. The router probabilities are the softmax of
        ``tokens @ self.w_gate`` over the experts; each token chooses its ``cfg.moe.top_k`` most probable experts,
        and its gates are their probabilities, divided by their sum over the chosen experts when
        ``cfg.moe.normalize_gates``. An expert takes at most ``max(ceil(capacity_factor * n * top_k /
        num_experts), min_capacity)`` assignments: every token's first choice is placed first, in token order,
        then every second choice, and so on; an assignment to a full expert is dropped. Returns (combine weights
        (n, num_experts): a token's gate at each expert that took it, 0 elsewhere; the load-balancing loss
        ``aux_loss_coef * num_experts * sum_e f_e * P_e``, with f_e the share of tokens whose first choice is
        expert e and P_e the mean router probability of e)."""
'''
MOE_GOLDEN = "\n\n" + MOE_HEAD + MOE_DOC + MOE_BODY
MOE_DRIVER = '''"""Run a toy mixture-of-experts layer on random token batches: python run_moe.py"""

import numpy as np

from moe.config import ModelConfig
from moe.router import TopKRouter


def main():
    cfg = ModelConfig()
    rng = np.random.default_rng(0)
    router = TopKRouter(cfg)
    experts = [rng.normal(scale=0.3, size=(cfg.d_model, cfg.d_model)) for _ in range(cfg.moe.num_experts)]
    for step in range(4):
        tokens = rng.normal(size=(16, cfg.d_model))
        combine, aux = router.route(tokens)
        out = sum(combine[:, [e]] * (tokens @ experts[e]) for e in range(cfg.moe.num_experts))
        dropped = int(((combine > 0).sum(axis=1) < cfg.moe.top_k).sum())
        print(f"step {step}: aux loss {aux:.5f}, tokens with a choice dropped {dropped}, "
              f"|out| {np.abs(out).mean():.4f}")


if __name__ == "__main__":
    main()
'''

_moe = editor(MOE_HEAD, MOE_BODY)

MOE_WRONG = {
    "pins top_k": _moe("moe.top_k", "2"),
    "capacity without top_k": _moe("moe.capacity_factor * n * moe.top_k / num_experts",
                                   "moe.capacity_factor * n / num_experts"),
    "capacity floored": _moe("math.ceil(moe.capacity_factor * n * moe.top_k / num_experts)",
                             "int(moe.capacity_factor * n * moe.top_k / num_experts)"),
    "min_capacity ignored": _moe("max(math.ceil(moe.capacity_factor * n * moe.top_k / num_experts), moe.min_capacity)",
                                 "math.ceil(moe.capacity_factor * n * moe.top_k / num_experts)"),
    "gates never renormalised": _moe('''        if moe.normalize_gates:
            gates = gates / gates.sum(axis=1, keepdims=True)
''', ""),
    "each token's choices placed together": _moe('''        for rank in range(moe.top_k):
            for i in range(n):
''', '''        for i in range(n):
            for rank in range(moe.top_k):
'''),
    "aux share over every choice": _moe("np.bincount(top[:, 0], minlength=num_experts) / n",
                                        "np.bincount(top.ravel(), minlength=num_experts) / top.size"),
    "aux without the expert count": _moe("moe.aux_loss_coef * num_experts * float(",
                                         "moe.aux_loss_coef * float("),
    "aux share after the drops": _moe("np.bincount(top[:, 0], minlength=num_experts) / n",
                                      "(combine > 0).sum(axis=0) / n"),
}
MOE_RIGHT = {
    "positions by cumsum": MOE_HEAD + '''        moe = self.cfg.moe
        logits = tokens @ self.w_gate
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        p = z / z.sum(axis=1, keepdims=True)
        n, e = p.shape
        k = moe.top_k
        order = np.argsort(-p, axis=1, kind="stable")[:, :k]
        g = np.take_along_axis(p, order, axis=1)
        if moe.normalize_gates:
            g = g / g.sum(axis=1, keepdims=True)
        cap = max(math.ceil(moe.capacity_factor * n * k / e), moe.min_capacity)
        filled = np.zeros(e)
        combine = np.zeros((n, e))
        for r in range(k):
            onehot = np.eye(e)[order[:, r]]
            position = np.cumsum(onehot, axis=0) - onehot + filled
            keep = (onehot > 0) & (position < cap)
            combine += keep * g[:, [r]]
            filled += keep.sum(axis=0)
        f = np.eye(e)[order[:, 0]].mean(axis=0)
        return combine, float(moe.aux_loss_coef * e * (f @ p.mean(axis=0)))
''',
    "sorted lists and counters": MOE_HEAD + '''        cfg = self.cfg.moe
        probs = self._softmax(tokens @ self.w_gate)
        n_tokens, n_experts = probs.shape
        choices = []
        for row in probs:
            ranked = sorted(range(n_experts), key=lambda j, row=row: -row[j])[:cfg.top_k]
            weights = [row[j] for j in ranked]
            if cfg.normalize_gates:
                s = sum(weights)
                weights = [w / s for w in weights]
            choices.append(list(zip(ranked, weights)))
        capacity = math.ceil(cfg.capacity_factor * n_tokens * cfg.top_k / n_experts)
        capacity = max(capacity, cfg.min_capacity)
        taken = [0] * n_experts
        combine = np.zeros((n_tokens, n_experts))
        for rank in range(cfg.top_k):
            for token, picked in enumerate(choices):
                expert, weight = picked[rank]
                if taken[expert] >= capacity:
                    continue
                taken[expert] += 1
                combine[token, expert] = weight
        firsts = [0] * n_experts
        for picked in choices:
            firsts[picked[0][0]] += 1
        mean_prob = probs.mean(axis=0)
        balance = sum(firsts[j] / n_tokens * mean_prob[j] for j in range(n_experts))
        return combine, cfg.aux_loss_coef * n_experts * balance
''',
}


def moe_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``route`` on general settings: top-1, top-2 and top-3 routing, capacities that bind (factors below
    1, the floor), the gates left unnormalised, other expert counts and token counts, another loss weight."""
    rng = np.random.default_rng(46)
    calls = []
    for experts, top_k, factor, floor, normalize, coef, n in ((4, 2, 0.5, 1, True, 0.01, 12),
                                                              (3, 1, 0.75, 2, True, 0.1, 10),
                                                              (6, 3, 1.25, 8, False, 0.02, 9),
                                                              (5, 2, 1.0, 1, False, 1.0, 15),
                                                              (4, 2, 2.0, 4, True, 0.5, 7),
                                                              (4, 1, 0.5, 3, True, 0.01, 16)):
        moe = SimpleNamespace(num_experts=experts, top_k=top_k, capacity_factor=factor, min_capacity=floor,
                              normalize_gates=normalize, aux_loss_coef=coef)
        cfg = SimpleNamespace(d_model=5, moe=moe)
        w_gate = rng.normal(size=(5, experts))
        tokens = rng.normal(size=(n, 5))

        def call(cfg=cfg, w=w_gate, x=tokens) -> object:
            router = ns["TopKRouter"](cfg)
            router.w_gate = w
            return router.route(x)

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "23-Lookahead", "files": {"optim/__init__.py": "", "optim/sgd.py": LA_SGD, "optim/lookahead.py":
     '"""The Lookahead optimiser wrapper."""\n\nimport numpy as np\n' + LA_GOLDEN, "train.py": LA_DRIVER},
     "function": "optim/lookahead.py::Lookahead.step", "command": "python train.py", "head": _NP,
     "wrong": LA_WRONG, "right": LA_RIGHT, "check": la_check,
     "gaps": {"pins k": ["k"], "pins alpha": ["alpha"], "alpha and its complement swapped": ["alpha"],
              "slow weights alias the parameters": ["np.array(p, copy=True)"],
              "slow weights taken after the first inner step": ["self.slow is None", "np.array(p, copy=True)"],
              "fast weights not reset": ["fast[...] = slow"],
              "fast weights replaced by new arrays": ["fast[...] = slow"],
              "synchronises on the first call": ["step_count"], "reset_momentum ignored": ["reset_momentum"]}},
    {"name": "24-CalibrationError", "files": {"calib/__init__.py": "", "calib/metrics.py":
     '"""Calibration metrics."""\n\nimport numpy as np\n' + CE_GOLDEN, "evaluate.py": CE_DRIVER},
     "function": "calib/metrics.py::calibration_error", "command": "python evaluate.py", "head": _NP,
     "wrong": CE_WRONG, "right": CE_RIGHT, "check": ce_check,
     "gaps": {"pins n_bins": ["n_bins"], "one bin too few": ["n_bins + 1"],
              "bins closed on the left": ["confidences > lower", "confidences <= upper"],
              "empty-bin guard dropped": ["count == 0"], "bins weighted equally": ["count / total"],
              "confidence of the true class": ["probs.max(axis=1)"], "signed gap": ["abs("],
              "norm ignored": ["norm"], "maximum of the weighted gaps": ["max(mce, gap)"]}},
    {"name": "25-MoERouter", "files": {"moe/__init__.py": "", "moe/config.py": MOE_CONFIG, "moe/router.py":
     '"""Mixture-of-experts routing."""\n\nimport math\n\nimport numpy as np\n' + MOE_GOLDEN,
     "run_moe.py": MOE_DRIVER},
     "function": "moe/router.py::TopKRouter.route", "command": "python run_moe.py",
     "head": "import math\n\nimport numpy as np\n\n\n", "wrong": MOE_WRONG, "right": MOE_RIGHT, "check": moe_check,
     "gaps": {"pins top_k": ["top_k"], "capacity without top_k": ["top_k", "capacity_factor * n * moe.top_k"],
              "capacity floored": ["math.ceil"], "min_capacity ignored": ["min_capacity"],
              "gates never renormalised": ["normalize_gates"],
              "each token's choices placed together": ["for rank in range(moe.top_k)"],
              "aux share over every choice": ["top[:, 0]"], "aux without the expert count": ["num_experts * float("],
              "aux share after the drops": ["top[:, 0]"]}},
]
"""The fourth fresh held-out tasks."""
