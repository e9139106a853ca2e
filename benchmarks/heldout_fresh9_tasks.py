"""A tenth held-out set for ``wrong_answers.py --set fresh9``: three numpy tasks of shapes that no other set nor any
test fixture has. The first is T5's relative position bias (Raffel et al. 2020) as a module's ``__call__`` reading
``self.num_buckets``, ``self.max_distance``, ``self.bidirectional`` and its learned table: the signed offset of each
key from each query, split by direction in the bidirectional form and folded onto the past in the causal one,
exact buckets for short distances, logarithmic ones up to ``max_distance`` and the last bucket beyond it, query
positions shifted by a cache's ``past_length``, and the result laid out (heads, queries, keys); the driver is an
encoder over a few short sequences, so neither the causal form, a cache, nor a distance past ``max_distance`` is
ever reached. The second is Adafactor (Shazeer and Stern 2018) as an optimiser's ``step`` that updates its
parameters and its state in place: the relative step size, the parameter scale floored by eps2, the increasing
decay ``1 - t ** decay_rate``, the second moment factored over the last two axes into row and column averages,
update clipping by the update's RMS, and first-moment momentum, decoupled weight decay, an explicit step size and
warm-up init as options; the driver fits a linear regression on the defaults, one call per step, with a matrix and
a vector only. The third is n-gram repeat blocking in beam search (Paulus, Xiong and Socher 2018): every token that
would complete an n-gram a hypothesis already holds gets -inf, hypothesis by hypothesis, with n = 1 banning every
token seen and n <= 0 turning it off; the driver beam-searches a toy bigram model with the default trigrams, one
call per step on a growing prefix. Written before its first run, and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from corpus_edits import editor

# -- T5 relative position bias (Raffel et al. 2020) ---------------------------------------------------------------

RB_HEAD = '''class RelativePositionBias:
    """A learned scalar per attention head and relative-position bucket, added to the attention logits of every
    layer of a T5 stack; ``weight`` is the (num_buckets, num_heads) table."""

    def __init__(self, num_heads, num_buckets=32, max_distance=128, bidirectional=True, seed=0):
        self.num_heads = num_heads
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.bidirectional = bidirectional
        self.weight = np.random.default_rng(seed).normal(scale=0.5, size=(num_buckets, num_heads))

    def __call__(self, query_length, key_length, past_length=0):
'''
RB_BODY = '''        context = np.arange(past_length, past_length + query_length)[:, None]
        memory = np.arange(key_length)[None, :]
        relative = memory - context
        nb = self.num_buckets
        if self.bidirectional:
            nb //= 2
            bucket = (relative > 0).astype(int) * nb
            n = np.abs(relative)
        else:
            bucket = np.zeros_like(relative)
            n = np.maximum(-relative, 0)
        max_exact = nb // 2
        scaled = np.log(np.maximum(n, 1) / max_exact) / math.log(self.max_distance / max_exact) * (nb - max_exact)
        large = np.minimum(max_exact + scaled.astype(int), nb - 1)
        bucket = bucket + np.where(n < max_exact, n, large)
        values = self.weight[bucket]
        return values.transpose(2, 0, 1)
'''
RB_DOC = '''        """The bias (num_heads, query_length, key_length) of attention from each query to each key. Query i
        sits at position ``past_length + i`` (the queries follow ``past_length`` cached positions when decoding
        step by step), key j at position j; the relative position is ``key position - query position``. Buckets:
        with ``self.bidirectional`` the ``self.num_buckets`` buckets are halved, nb = num_buckets // 2 for each
        direction, and a key after its query (relative > 0) gets nb added to its bucket; the distance is
        n = |relative|. Without it (causal), nb = num_buckets and the distance is n = max(-relative, 0), so a
        key after its query falls in the bucket of distance 0. With max_exact = nb // 2, a distance
        n < max_exact is its own bucket; a larger one gets
        ``max_exact + int(log(n / max_exact) / log(self.max_distance / max_exact) * (nb - max_exact))``
        (the float truncated toward zero), at most nb - 1, so every distance from about ``self.max_distance`` on
        shares the last bucket. The bias of a pair is ``self.weight[bucket]``, one value per head, and the
        result has the heads first. Needs num_buckets >= 4 (>= 2 when causal) and max_distance > max_exact."""
'''
RB_GOLDEN = "\n\n" + RB_HEAD + RB_DOC + RB_BODY
RB_DRIVER = '''"""Self-attention of a toy T5 encoder layer with relative position biases: python encode.py"""

import numpy as np

from t5bias.attention import RelativePositionBias

D_MODEL = 16
NUM_HEADS = 4
D_HEAD = 8


def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def main():
    rng = np.random.default_rng(0)
    position_bias = RelativePositionBias(NUM_HEADS)
    w_q = rng.normal(scale=D_MODEL ** -0.5, size=(D_MODEL, NUM_HEADS, D_HEAD))
    w_k = rng.normal(scale=D_MODEL ** -0.5, size=(D_MODEL, NUM_HEADS, D_HEAD))
    for batch, length in enumerate((9, 17, 24, 33, 40)):
        x = rng.normal(size=(length, D_MODEL))
        q = np.einsum("ld,dhe->hle", x, w_q)
        k = np.einsum("ld,dhe->hle", x, w_k)
        scores = q @ k.transpose(0, 2, 1) + position_bias(length, length)
        attn = softmax(scores)
        distance = np.abs(np.arange(length)[:, None] - np.arange(length)[None, :])
        reach = (attn * distance).sum(axis=-1).mean(axis=-1)
        print(f"batch {batch} (length {length}): mean attended distance per head {reach.round(3).tolist()}")


if __name__ == "__main__":
    main()
'''

_rb = editor(RB_HEAD, RB_BODY)

RB_WRONG = {
    "relative position reversed": _rb("relative = memory - context", "relative = context - memory"),
    "exact range from the whole bucket count": _rb("max_exact = nb // 2", "max_exact = self.num_buckets // 2"),
    "causal form by absolute distance": _rb("n = np.maximum(-relative, 0)", "n = np.abs(relative)"),
    "no clamp to the last bucket": _rb("large = np.minimum(max_exact + scaled.astype(int), nb - 1)",
                                       "large = max_exact + scaled.astype(int)"),
    "log ratio over max_distance alone": _rb("math.log(self.max_distance / max_exact)",
                                             "math.log(self.max_distance)"),
    "pins max_distance": _rb("math.log(self.max_distance / max_exact)", "math.log(128 / max_exact)"),
    "cache offset ignored": _rb("context = np.arange(past_length, past_length + query_length)[:, None]",
                                "context = np.arange(query_length)[:, None]"),
    "log bucket rounded": _rb("max_exact + scaled.astype(int)", "max_exact + np.round(scaled).astype(int)"),
    "heads reshaped, not transposed": _rb(
        "return values.transpose(2, 0, 1)",
        "return values.reshape(self.num_heads, values.shape[0], values.shape[1])"),
}
RB_RIGHT = {
    "pair by pair with a scalar bucket helper": RB_HEAD + '''        total = self.num_buckets
        half = total // 2 if self.bidirectional else total
        exact = half // 2
        denom = math.log(self.max_distance / exact)

        def to_bucket(rel):
            base = 0
            if self.bidirectional:
                if rel > 0:
                    base = half
                dist = abs(rel)
            else:
                dist = -rel if rel < 0 else 0
            if dist < exact:
                return base + dist
            far = exact + int(math.log(dist / exact) / denom * (half - exact))
            return base + min(far, half - 1)

        out = np.zeros((self.num_heads, query_length, key_length))
        for i in range(query_length):
            for j in range(key_length):
                out[:, i, j] = self.weight[to_bucket(j - (past_length + i))]
        return out
''',
    "table per offset, gathered with take": RB_HEAD + '''        q_pos = np.arange(query_length) + past_length
        rel = np.subtract.outer(np.arange(key_length), q_pos).T
        nb = self.num_buckets // 2 if self.bidirectional else self.num_buckets
        max_exact = nb // 2
        lo, hi = int(rel.min()), int(rel.max())
        offsets = np.arange(lo, hi + 1)
        if self.bidirectional:
            dist = np.abs(offsets)
            side = np.where(offsets > 0, nb, 0)
        else:
            dist = np.clip(-offsets, 0, None)
            side = np.zeros_like(offsets)
        safe = np.where(dist >= max_exact, dist, max_exact)
        log_part = np.log(safe / max_exact) / math.log(self.max_distance / max_exact) * (nb - max_exact)
        far = np.clip(max_exact + np.trunc(log_part).astype(np.int64), None, nb - 1)
        table = side + np.where(dist < max_exact, dist, far)
        buckets = table[rel - lo]
        return np.moveaxis(np.take(self.weight, buckets, axis=0), -1, 0)
''',
}


def rb_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of the bias on general settings: other head and bucket counts (one not a power of two) and
    max_distances, the bidirectional and the causal form, one query after a long cache and a block of queries
    after a short one, more keys than queries, distances far past ``max_distance``."""
    calls: list[Callable[[], object]] = []
    for heads, buckets, max_distance, bidirectional, q_len, k_len, past in (
            (4, 32, 128, True, 20, 20, 0),
            (3, 32, 128, False, 1, 50, 49),
            (2, 16, 20, True, 30, 30, 0),
            (5, 8, 12, False, 25, 25, 0),
            (2, 32, 64, True, 6, 140, 134),
            (3, 10, 40, True, 12, 17, 5),
            (1, 64, 256, False, 40, 40, 0),
            (2, 32, 128, True, 3, 200, 0),
            (3, 32, 128, True, 8, 300, 150)):

        def call(h=heads, b=buckets, m=max_distance, bi=bidirectional, q=q_len, k=k_len, p=past) -> object:
            module = ns["RelativePositionBias"](h, num_buckets=b, max_distance=m, bidirectional=bi, seed=h + b)
            return module(q, k, past_length=p)

        calls.append(call)
    return calls


# -- Adafactor's factored second moment (Shazeer and Stern 2018) --------------------------------------------------

AF_HEAD = '''class Adafactor:
    """Adafactor over a list of numpy parameter arrays, which ``step`` updates in place. ``lr`` is an explicit
    step size, for ``relative_step=False`` only; ``eps`` is (eps1, eps2): what is added to squared gradients and
    the floor of a parameter's scale. ``state[i]`` holds parameter i's second-moment averages: "row" and "col"
    for a parameter of two or more axes, "sq" for a vector, and "exp_avg" when ``beta1`` is set."""

    def __init__(self, params, lr=None, eps=(1e-30, 1e-3), clip_threshold=1.0, decay_rate=-0.8, beta1=None,
                 weight_decay=0.0, scale_parameter=True, relative_step=True, warmup_init=False):
        if lr is not None and relative_step:
            raise ValueError("an explicit lr needs relative_step=False")
        if lr is None and not relative_step:
            raise ValueError("relative_step=False needs an lr")
        if warmup_init and not relative_step:
            raise ValueError("warmup_init needs relative_step=True")
        self.params = list(params)
        self.lr = lr
        self.eps = eps
        self.clip_threshold = clip_threshold
        self.decay_rate = decay_rate
        self.beta1 = beta1
        self.weight_decay = weight_decay
        self.scale_parameter = scale_parameter
        self.relative_step = relative_step
        self.warmup_init = warmup_init
        self.t = 0
        self.state = []
        for p in self.params:
            s = {}
            if p.ndim >= 2:
                s["row"] = np.zeros(p.shape[:-1])
                s["col"] = np.zeros(p.shape[:-2] + p.shape[-1:])
            else:
                s["sq"] = np.zeros(p.shape)
            if beta1 is not None:
                s["exp_avg"] = np.zeros(p.shape)
            self.state.append(s)

    def step(self, grads):
'''
AF_BODY = '''        self.t += 1
        t = self.t
        eps1, eps2 = self.eps
        if self.relative_step:
            start = 1e-6 * t if self.warmup_init else 1e-2
            rho = min(start, 1.0 / math.sqrt(t))
        else:
            rho = self.lr
        beta2 = 1.0 - t ** self.decay_rate
        for p, g, s in zip(self.params, grads, self.state):
            alpha = rho
            if self.scale_parameter:
                alpha = max(eps2, math.sqrt(float(np.mean(p ** 2)))) * rho
            sq = g ** 2 + eps1
            if p.ndim >= 2:
                s["row"] = beta2 * s["row"] + (1.0 - beta2) * sq.mean(axis=-1)
                s["col"] = beta2 * s["col"] + (1.0 - beta2) * sq.mean(axis=-2)
                v = s["row"][..., :, None] * s["col"][..., None, :] / s["row"].mean(axis=-1)[..., None, None]
            else:
                s["sq"] = beta2 * s["sq"] + (1.0 - beta2) * sq
                v = s["sq"]
            u = g / np.sqrt(v)
            u = u / max(1.0, math.sqrt(float(np.mean(u ** 2))) / self.clip_threshold)
            if self.beta1 is not None:
                s["exp_avg"] = self.beta1 * s["exp_avg"] + (1.0 - self.beta1) * u
                u = s["exp_avg"]
            if self.weight_decay:
                p -= self.weight_decay * alpha * p
            p -= alpha * u
'''
AF_DOC = '''        """One Adafactor update of each parameter from its gradient in ``grads`` (same order and shapes;
        the gradients are not changed). ``self.t`` counts the steps and is incremented first, so the first step has
        t = 1. The relative step size is ``rho = min(1e-2, 1 / sqrt(t))`` with ``relative_step`` (with
        ``warmup_init``, ``min(1e-6 * t, 1 / sqrt(t))``), else ``self.lr``; the second-moment decay is
        ``beta2 = 1 - t ** self.decay_rate`` (0 at t = 1). With RMS(x) = sqrt(mean(x ** 2)) and (eps1, eps2) =
        ``self.eps``, for each parameter p (its value before this step) and gradient g:

        - the step size is ``alpha = max(eps2, RMS(p)) * rho`` with ``scale_parameter``, else ``rho``;
        - with G = g ** 2 + eps1: a parameter of two or more axes has its second moment factored over its last
          two axes, leading axes being independent matrices: ``state["row"]`` (shape p.shape[:-1]) becomes
          ``beta2 * row + (1 - beta2) * G.mean(axis=-1)``, ``state["col"]`` (p.shape[:-2] + p.shape[-1:])
          ``beta2 * col + (1 - beta2) * G.mean(axis=-2)``, and the estimate is
          ``V = row[..., :, None] * col[..., None, :] / row.mean(axis=-1)[..., None, None]``; a vector has
          ``state["sq"]`` become ``beta2 * sq + (1 - beta2) * G`` and V = sq;
        - the update ``U = g / sqrt(V)`` is clipped: divided by ``max(1, RMS(U) / self.clip_threshold)``;
        - when ``self.beta1`` is not None, ``state["exp_avg"]`` becomes ``beta1 * exp_avg + (1 - beta1) * U`` and
          is the update instead;
        - with a nonzero ``self.weight_decay``, ``p -= weight_decay * alpha * p`` first; then ``p -= alpha * U``.

        The parameters are changed in place (the very arrays of ``self.params``); the state arrays may be updated
        in place or replaced. Returns None."""
'''
AF_GOLDEN = "\n\n" + AF_HEAD + AF_DOC + AF_BODY
AF_DRIVER = '''"""Fit a linear regression with Adafactor's default relative step: python train_regression.py"""

import numpy as np

from factored.adafactor import Adafactor


def main():
    rng = np.random.default_rng(0)
    true_w = rng.normal(size=(6, 3))
    true_b = rng.normal(size=3)
    x_all = rng.normal(size=(512, 6))
    y_all = x_all @ true_w + true_b + 0.05 * rng.normal(size=(512, 3))
    w = rng.normal(scale=0.1, size=(6, 3))
    b = np.zeros(3)
    optimizer = Adafactor([w, b])
    for step in range(1, 301):
        idx = rng.choice(len(x_all), size=32, replace=False)
        x, y = x_all[idx], y_all[idx]
        err = x @ w + b - y
        loss = float(np.mean(err ** 2))
        grad_w = 2.0 * x.T @ err / err.size
        grad_b = 2.0 * err.sum(axis=0) / err.size
        optimizer.step([grad_w, grad_b])
        if step % 50 == 0:
            print(f"step {step}: mse {loss:.4f}, |w| {np.linalg.norm(w):.4f}, b {b.round(4).tolist()}")


if __name__ == "__main__":
    main()
'''

_af = editor(AF_HEAD, AF_BODY)
_AF_FACTORED = '''                s["row"] = beta2 * s["row"] + (1.0 - beta2) * sq.mean(axis=-1)
                s["col"] = beta2 * s["col"] + (1.0 - beta2) * sq.mean(axis=-2)
                v = s["row"][..., :, None] * s["col"][..., None, :] / s["row"].mean(axis=-1)[..., None, None]
'''

AF_WRONG = {
    "pins decay_rate": _af("beta2 = 1.0 - t ** self.decay_rate", "beta2 = 1.0 - t ** -0.8"),
    "update always scaled to the clip threshold": _af(
        "u = u / max(1.0, math.sqrt(float(np.mean(u ** 2))) / self.clip_threshold)",
        "u = u / (math.sqrt(float(np.mean(u ** 2))) / self.clip_threshold)"),
    "factored estimate over the row sum": _af("/ s[\"row\"].mean(axis=-1)[..., None, None]",
                                              "/ s[\"row\"].sum(axis=-1)[..., None, None]"),
    "factored over fixed axes of a matrix": _af(_AF_FACTORED, '''\
                s["row"] = beta2 * s["row"] + (1.0 - beta2) * sq.mean(axis=1)
                s["col"] = beta2 * s["col"] + (1.0 - beta2) * sq.mean(axis=0)
                v = np.outer(s["row"], s["col"]) / s["row"].mean()
'''),
    "no floor on the parameter scale": _af("alpha = max(eps2, math.sqrt(float(np.mean(p ** 2)))) * rho",
                                           "alpha = math.sqrt(float(np.mean(p ** 2))) * rho"),
    "momentum flag ignored": _af('''            if self.beta1 is not None:
                s["exp_avg"] = self.beta1 * s["exp_avg"] + (1.0 - self.beta1) * u
                u = s["exp_avg"]
''', ""),
    "explicit lr ignored": _af('''        if self.relative_step:
            start = 1e-6 * t if self.warmup_init else 1e-2
            rho = min(start, 1.0 / math.sqrt(t))
        else:
            rho = self.lr
''', '''        start = 1e-6 * t if self.warmup_init else 1e-2
        rho = min(start, 1.0 / math.sqrt(t))
'''),
    "warm-up init ignored": _af("start = 1e-6 * t if self.warmup_init else 1e-2", "start = 1e-2"),
    "parameters rebound, not updated": _af('''            if self.weight_decay:
                p -= self.weight_decay * alpha * p
            p -= alpha * u
''', '''            if self.weight_decay:
                p = p - self.weight_decay * alpha * p
            p = p - alpha * u
'''),
}
AF_RIGHT = {
    "matrix by matrix with outer products": AF_HEAD + '''        self.t = self.t + 1
        step = self.t
        tiny, floor = self.eps
        if not self.relative_step:
            rel = self.lr
        elif self.warmup_init:
            rel = min(1e-6 * step, step ** -0.5)
        else:
            rel = min(1e-2, step ** -0.5)
        decay = 1.0 - math.pow(step, self.decay_rate)

        def rms(x):
            return float(np.linalg.norm(x)) / math.sqrt(x.size)

        for index, param in enumerate(self.params):
            grad = grads[index]
            st = self.state[index]
            lr_here = max(floor, rms(param)) * rel if self.scale_parameter else rel
            g2 = np.square(grad) + tiny
            if param.ndim >= 2:
                rows, cols = param.shape[-2:]
                g2_m = g2.reshape(-1, rows, cols)
                row = st["row"].reshape(-1, rows) * decay + (1.0 - decay) * g2_m.sum(axis=2) / cols
                col = st["col"].reshape(-1, cols) * decay + (1.0 - decay) * g2_m.sum(axis=1) / rows
                est = np.empty_like(g2_m)
                for k in range(g2_m.shape[0]):
                    est[k] = np.outer(row[k], col[k]) / (row[k].sum() / rows)
                st["row"] = row.reshape(param.shape[:-1])
                st["col"] = col.reshape(param.shape[:-2] + (cols,))
                est = est.reshape(param.shape)
            else:
                st["sq"] = decay * st["sq"] + (1.0 - decay) * g2
                est = st["sq"]
            upd = grad / np.sqrt(est)
            ratio = rms(upd) / self.clip_threshold
            if ratio > 1.0:
                upd = upd / ratio
            if self.beta1 is not None:
                st["exp_avg"] = st["exp_avg"] * self.beta1 + upd * (1.0 - self.beta1)
                upd = st["exp_avg"]
            if self.weight_decay != 0.0:
                param *= 1.0 - self.weight_decay * lr_here
            param -= lr_here * upd
''',
    "reciprocal square roots of the factors, state in place": AF_HEAD + '''        self.t += 1
        eps1, eps2 = self.eps
        rho = self.lr
        if self.relative_step:
            rho = min(1e-6 * self.t, 1.0 / np.sqrt(self.t)) if self.warmup_init else min(1e-2, 1.0 / np.sqrt(self.t))
        b2 = 1.0 - float(self.t) ** self.decay_rate
        for p, g, s in zip(self.params, grads, self.state):
            scale = np.sqrt(np.mean(np.square(p))) if self.scale_parameter else None
            lr = rho if scale is None else rho * np.maximum(scale, eps2)
            g2 = g * g + eps1
            if p.ndim > 1:
                s["row"] *= b2
                s["row"] += (1.0 - b2) * np.mean(g2, axis=-1)
                s["col"] *= b2
                s["col"] += (1.0 - b2) * np.mean(g2, axis=-2)
                r_factor = np.sqrt(s["row"] / np.mean(s["row"], axis=-1, keepdims=True))
                c_factor = np.sqrt(s["col"])
                u = g / r_factor[..., :, None] / c_factor[..., None, :]
            else:
                s["sq"] *= b2
                s["sq"] += (1.0 - b2) * g2
                u = g / np.sqrt(s["sq"])
            u = u / np.maximum(np.sqrt(np.mean(u * u)) / self.clip_threshold, 1.0)
            if self.beta1 is not None:
                s["exp_avg"] *= self.beta1
                s["exp_avg"] += (1.0 - self.beta1) * u
                u = s["exp_avg"]
            shrink = lr * self.weight_decay * p if self.weight_decay else 0.0
            p -= shrink
            p -= lr * u
''',
}


def af_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a few steps on general settings: a zero-initialised vector, a matrix with a unit axis and a
    three-axis parameter; momentum with weight decay, an explicit step size without parameter scaling, warm-up
    init, other decays, eps and clip thresholds; gradients that grow and shrink so that clipping both engages
    and does not. Each gives, after every step, the parameters, the state and the gradients."""
    rng = np.random.default_rng(101)
    calls: list[Callable[[], object]] = []
    for shapes, kwargs, steps, scales in (
            ([(5, 4), (4,)], {}, 6, (1.0, 1.0, 3.0, 0.2, 0.05, 1.0)),
            ([(2, 3, 4), (3,), (6, 2)], {"beta1": 0.9, "weight_decay": 0.01}, 5, (1.0, 0.5, 2.0, 0.1, 1.0)),
            ([(4, 6), (1, 5)], {"lr": 0.05, "relative_step": False, "scale_parameter": False,
                                "clip_threshold": 0.5, "decay_rate": -0.5}, 5, (1.0, 4.0, 0.3, 1.0, 0.01)),
            ([(3, 3), (7,)], {"warmup_init": True, "eps": (1e-20, 1e-2)}, 4, (1.0, 1.0, 0.1, 2.0)),
            ([(2, 2, 3, 5)], {"beta1": 0.5, "clip_threshold": 2.0, "decay_rate": -1.0}, 4, (1.0, 0.2, 5.0, 1.0)),
            ([(6,), (2, 7)], {"lr": 0.1, "relative_step": False, "weight_decay": 0.1}, 4, (2.0, 0.5, 0.5, 3.0))):
        init = [rng.normal(size=s) if i != 1 else np.zeros(s) for i, s in enumerate(shapes)]
        grad_seq = [[scale * rng.normal(size=s) * rng.uniform(0.2, 3.0, size=s) for s in shapes] for scale in scales]

        def call(init=init, grad_seq=grad_seq, kwargs=kwargs, steps=steps) -> object:
            params = [p.copy() for p in init]
            optimizer = ns["Adafactor"](params, **kwargs)
            trace = []
            for grads in grad_seq[:steps]:
                held = [g.copy() for g in grads]
                result = optimizer.step(held)
                state = [[s[key].copy() for key in sorted(s)] for s in optimizer.state]
                trace.append(([p.copy() for p in params], state, held, result is None, optimizer.t))
            return trace

        calls.append(call)
    return calls


# -- n-gram repeat blocking in beam search (Paulus, Xiong and Socher 2018) ----------------------------------------

NG_SIG = "def block_repeated_ngrams(tokens, lprobs, no_repeat_ngram_size=3):\n"
NG_BODY = '''    n = no_repeat_ngram_size
    out = np.array(lprobs, dtype=float)
    if n <= 0:
        return out
    tokens = np.asarray(tokens)
    step = tokens.shape[1]
    for beam, row in enumerate(tokens.tolist()):
        followers = {}
        for i in range(step - n + 1):
            prefix = tuple(row[i:i + n - 1])
            followers.setdefault(prefix, set()).add(row[i + n - 1])
        current = tuple(row[step - n + 1:])
        banned = sorted(followers.get(current, ()))
        out[beam, banned] = -np.inf
    return out
'''
NG_DOC = '''    """Forbid each hypothesis of a beam to repeat an n-gram it already holds (n = ``no_repeat_ngram_size``).

    ``tokens`` (beams, step) are the integer tokens of each hypothesis so far, the start token included, and
    ``lprobs`` (beams, vocab) the log-probabilities of each hypothesis's next token. A token w is banned for a
    hypothesis when its last n - 1 tokens followed by w form an n-gram that already occurs anywhere in it (as
    tokens[b, i:i + n] for some i); every banned token's log-probability becomes -inf, all others are kept as
    they are. Hypotheses are independent of each other. So n = 1 bans every token the hypothesis holds, a
    hypothesis of fewer than n tokens bans nothing (step may be 0), and n <= 0 turns blocking off. Returns a new
    float array of ``lprobs``'s shape; neither argument is changed.
    """
'''
NG_GOLDEN = "\n\n" + NG_SIG + NG_DOC + NG_BODY
NG_DRIVER = '''"""Beam-search a toy bigram language model with trigram blocking: python generate.py"""

import numpy as np

from decoding.constraints import block_repeated_ngrams

VOCAB = 10
BOS = 0


def log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def beam_search(table, first, beam_size=4, max_len=14):
    tokens = np.array([[BOS, first]])
    scores = np.zeros(1)
    for _ in range(max_len):
        lprobs = log_softmax(table[tokens[:, -1]])
        lprobs[:, BOS] = -np.inf
        lprobs = block_repeated_ngrams(tokens, lprobs)
        candidates = (scores[:, None] + lprobs).ravel()
        best = np.argsort(-candidates, kind="stable")[:beam_size]
        beam, word = np.divmod(best, VOCAB)
        tokens = np.concatenate([tokens[beam], word[:, None]], axis=1)
        scores = candidates[best]
    return tokens, scores


def main():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(VOCAB, VOCAB))
    for a, b in ((2, 3), (3, 4), (4, 2), (5, 6), (6, 5)):
        table[a, b] += 3.0  # short loops the model likes to repeat
    for first in (2, 5, 7):
        tokens, scores = beam_search(table, first)
        best = tokens[0].tolist()
        trigrams = [tuple(best[i:i + 3]) for i in range(len(best) - 2)]
        print(f"start {first}: {best} score {scores[0]:.3f}, distinct trigrams {len(set(trigrams))}/{len(trigrams)}")


if __name__ == "__main__":
    main()
'''

_ng = editor(NG_SIG, NG_BODY)

NG_WRONG = {
    "last n-gram never collected": _ng("for i in range(step - n + 1):", "for i in range(step - n):"),
    "suffix by a negative index": _ng("current = tuple(row[step - n + 1:])", "current = tuple(row[-(n - 1):])"),
    "blocks (n + 1)-grams": _ng('''        for i in range(step - n + 1):
            prefix = tuple(row[i:i + n - 1])
            followers.setdefault(prefix, set()).add(row[i + n - 1])
        current = tuple(row[step - n + 1:])
''', '''        for i in range(step - n):
            prefix = tuple(row[i:i + n])
            followers.setdefault(prefix, set()).add(row[i + n])
        current = tuple(row[step - n:])
'''),
    "n-grams pooled across hypotheses": _ng('''    for beam, row in enumerate(tokens.tolist()):
        followers = {}
''', '''    followers = {}
    for beam, row in enumerate(tokens.tolist()):
'''),
    "pins the n-gram size": _ng("    n = no_repeat_ngram_size\n", "    n = 3\n"),
    "log-probabilities changed in place": _ng("    out = np.array(lprobs, dtype=float)\n", "    out = lprobs\n"),
    "finite penalty for -inf": _ng("out[beam, banned] = -np.inf", "out[beam, banned] = -1e9"),
    "no off switch": _ng('''    if n <= 0:
        return out
''', ""),
    "one follower kept per prefix": _ng('''            followers.setdefault(prefix, set()).add(row[i + n - 1])
        current = tuple(row[step - n + 1:])
        banned = sorted(followers.get(current, ()))
''', '''            followers[prefix] = row[i + n - 1]
        current = tuple(row[step - n + 1:])
        banned = [followers[current]] if current in followers else []
'''),
}
NG_RIGHT = {
    "sliding windows compared at once": NG_SIG + '''    size = int(no_repeat_ngram_size)
    result = np.asarray(lprobs, dtype=float).copy()
    toks = np.asarray(tokens)
    step = toks.shape[1]
    if size < 1 or step < size:
        return result
    windows = np.lib.stride_tricks.sliding_window_view(toks, size, axis=1)
    tail = toks[:, step - size + 1:]
    hit = np.all(windows[:, :, :size - 1] == tail[:, None, :], axis=2)
    rows, cols = np.nonzero(hit)
    result[rows, windows[rows, cols, size - 1]] = -np.inf
    return result
''',
    "zipped n-grams per hypothesis": NG_SIG + '''    size = no_repeat_ngram_size
    blocked = np.array(lprobs, dtype=np.float64, copy=True)
    if size < 1:
        return blocked
    for b in range(len(blocked)):
        hyp = [int(x) for x in tokens[b]]
        if len(hyp) < size:
            continue
        context = hyp[len(hyp) - size + 1:] if size > 1 else []
        for gram in zip(*(hyp[k:] for k in range(size))):
            if list(gram[:-1]) == context:
                blocked[b, gram[-1]] = float("-inf")
    return blocked
''',
}


def ng_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general inputs: sizes 1 to 4 and the off sizes 0 and -1, hypotheses of no token, of n - 1 and of
    exactly n tokens, a run like "a a a" whose last n-gram is the one to block, a prefix seen with two different
    followers, hypotheses that differ from each other, and log-probabilities already -inf somewhere; each gives
    the result and both arguments as the caller holds them afterwards."""
    rng = np.random.default_rng(103)
    cases = [
        (3, [[0, 4, 2, 3, 4, 2, 5, 4, 2], [0, 1, 1, 1, 2, 1, 1, 3, 1], [0, 2, 3, 2, 3, 2, 4, 5, 6]], 7),
        (2, [[0, 3, 1, 3, 2, 4, 3], [0, 1, 2, 3, 4, 5, 6]], 8),
        (1, [[0, 2, 2, 5], [0, 1, 3, 4]], 6),
        (3, np.zeros((3, 0), dtype=int).tolist(), 5),
        (3, [[0, 1], [2, 2]], 4),
        (3, [[2, 2, 2], [0, 1, 0]], 4),
        (4, rng.integers(0, 3, size=(5, 16)).tolist(), 4),
        (2, rng.integers(0, 4, size=(4, 12)).tolist(), 5),
        (0, [[0, 1, 1, 1, 1], [0, 2, 2, 2, 2]], 3),
        (-1, [[0, 1, 0, 1, 0]], 3),
        (3, rng.integers(0, 3, size=(6, 11)).tolist(), 3),
        (5, [[0, 1, 2, 3, 4, 0, 1, 2, 3], [0, 1, 2, 3, 4, 0, 1, 2, 4]], 6),
    ]
    calls: list[Callable[[], object]] = []
    for n, rows, vocab in cases:
        tokens = np.array(rows, dtype=int).reshape(len(rows), -1)
        lprobs = rng.normal(size=(len(rows), vocab)) - 2.0
        lprobs[0, vocab - 1] = -np.inf

        def call(n=n, tokens=tokens, lprobs=lprobs) -> object:
            t, lp = tokens.copy(), lprobs.copy()
            return ns["block_repeated_ngrams"](t, lp, no_repeat_ngram_size=n), lp, t

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
_MATH_NP = "import math\n\nimport numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "37-T5RelativeBias", "files": {"t5bias/__init__.py": "", "t5bias/attention.py":
     '"""Attention biases for a T5 stack."""\n\nimport math\n\nimport numpy as np\n' + RB_GOLDEN,
     "encode.py": RB_DRIVER},
     "function": "t5bias/attention.py::RelativePositionBias.__call__", "command": "python encode.py",
     "head": _MATH_NP, "wrong": RB_WRONG, "right": RB_RIGHT, "check": rb_check,
     "gaps": {"relative position reversed": ["memory - context"],
              "exact range from the whole bucket count": ["max_exact = nb // 2", "nb //= 2"],
              "causal form by absolute distance": ["bidirectional", "np.maximum(-relative, 0)"],
              "no clamp to the last bucket": ["nb - 1", "np.minimum(max_exact + scaled.astype(int), nb - 1)"],
              "log ratio over max_distance alone": ["self.max_distance / max_exact"],
              "pins max_distance": ["max_distance"], "cache offset ignored": ["past_length"],
              "log bucket rounded": ["scaled.astype(int)"],
              "heads reshaped, not transposed": ["values.transpose(2, 0, 1)"]}},
    {"name": "38-AdafactorStep", "files": {"factored/__init__.py": "", "factored/adafactor.py":
     '"""Memory-light adaptive optimisers."""\n\nimport math\n\nimport numpy as np\n' + AF_GOLDEN,
     "train_regression.py": AF_DRIVER},
     "function": "factored/adafactor.py::Adafactor.step", "command": "python train_regression.py",
     "head": _MATH_NP, "wrong": AF_WRONG, "right": AF_RIGHT, "check": af_check,
     "gaps": {"pins decay_rate": ["decay_rate"],
              "update always scaled to the clip threshold": ["max(1.0", "clip_threshold"],
              "factored estimate over the row sum": ['s["row"].mean(axis=-1)[..., None, None]'],
              "factored over fixed axes of a matrix": ["sq.mean(axis=-1)", "sq.mean(axis=-2)"],
              "no floor on the parameter scale": ["eps2"], "momentum flag ignored": ["beta1"],
              "explicit lr ignored": ["relative_step", "self.lr"], "warm-up init ignored": ["warmup_init"],
              "parameters rebound, not updated": ["p -= alpha * u"]}},
    {"name": "39-NGramBlocking", "files": {"decoding/__init__.py": "", "decoding/constraints.py":
     '"""Constraints applied to next-token scores during beam search."""\n\nimport numpy as np\n' + NG_GOLDEN,
     "generate.py": NG_DRIVER},
     "function": "decoding/constraints.py::block_repeated_ngrams", "command": "python generate.py",
     "head": _NP, "wrong": NG_WRONG, "right": NG_RIGHT, "check": ng_check,
     "gaps": {"last n-gram never collected": ["range(step - n + 1)"],
              "suffix by a negative index": ["row[step - n + 1:]"],
              "blocks (n + 1)-grams": ["row[i:i + n - 1]", "row[step - n + 1:]"],
              "n-grams pooled across hypotheses": ["followers = {}"],
              "pins the n-gram size": ["no_repeat_ngram_size"],
              "log-probabilities changed in place": ["np.array(lprobs, dtype=float)"],
              "finite penalty for -inf": ["-np.inf"], "no off switch": ["n <= 0"],
              "one follower kept per prefix": ["followers.setdefault(prefix, set())"]}},
]
"""The ninth fresh held-out tasks."""
