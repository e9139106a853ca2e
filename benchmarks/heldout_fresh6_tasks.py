"""A seventh held-out set for ``wrong_answers.py --set fresh6``: three numpy tasks of shapes that no other set nor
any test fixture has. The first is the Adam optimiser's step (Kingma and Ba 2015) with both bias corrections, a
per-parameter state dict whose moment arrays are changed in place, weight decay either decoupled as AdamW's
(Loshchilov and Hutter 2019) or added to the gradient, and an AMSGrad flag (Reddi, Kale and Kumar 2018); the driver
runs the decoupled default without AMSGrad, and the model holds the parameter arrays. The second is the batch-hard
triplet loss (Hermans, Beyer and Leibe 2017) from a Gram-matrix distance with a clamp, with a squared-distance and
a soft-margin option and guards for anchors without a positive or a negative, which the driver's class-balanced
batches never need. The third is causal self-attention with ALiBi biases (Press, Smith and Lewis 2022) reading its
nested config (``self.cfg.attn.*``): per-head slopes with the interleaved extra slopes of a head count that is not a
power of two, a key padding mask and a guard for queries that see no key, none of which the driver's eight heads and
right-padded batches reach. Written before its first run, and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

# -- Adam / AdamW / AMSGrad (Kingma and Ba 2015; Loshchilov and Hutter 2019; Reddi et al. 2018) --------------------

AD_HEAD = '''class Adam:
    """Adam over a list of numpy arrays that the model holds, changed in place. ``decoupled`` makes the weight
    decay AdamW's; ``amsgrad`` keeps the running maximum of the second moments."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, decoupled=True,
                 amsgrad=False):
        self.params = list(params)
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self.weight_decay = weight_decay
        self.decoupled = decoupled
        self.amsgrad = amsgrad
        self.state = [{} for _ in self.params]

    def state_dict(self):
        """The per-parameter state dicts themselves, as a checkpoint writer keeps them."""
        return {"state": self.state, "betas": self.betas, "lr": self.lr}

    def step(self, grads):
'''
AD_BODY = '''        beta1, beta2 = self.betas
        for p, g, state in zip(self.params, grads, self.state):
            if not state:
                state["step"] = 0
                state["exp_avg"] = np.zeros_like(p)
                state["exp_avg_sq"] = np.zeros_like(p)
                if self.amsgrad:
                    state["max_exp_avg_sq"] = np.zeros_like(p)
            state["step"] += 1
            t = state["step"]
            if self.weight_decay != 0.0:
                if self.decoupled:
                    p *= 1.0 - self.lr * self.weight_decay
                else:
                    g = g + self.weight_decay * p
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m *= beta1
            m += (1.0 - beta1) * g
            v *= beta2
            v += (1.0 - beta2) * g * g
            if self.amsgrad:
                np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
                v = state["max_exp_avg_sq"]
            m_hat = m / (1.0 - beta1 ** t)
            v_hat = v / (1.0 - beta2 ** t)
            p -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
'''
AD_DOC = '''        """One Adam step. ``grads`` is a list of arrays, one per parameter in the order of ``params``
        and of its shape; it is not changed. Each parameter's state dict holds its own step count ``step`` (this
        step counted) and the moment arrays ``exp_avg`` and ``exp_avg_sq`` (and ``max_exp_avg_sq`` with ``amsgrad``),
        made as zeros on the first step and changed in place afterwards. With a nonzero ``weight_decay``: when
        ``decoupled`` the parameter is first shrunk, ``p *= 1 - lr * weight_decay``; otherwise
        ``weight_decay * p`` is added to the gradient before the moments. Then
        ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g ** 2``; with ``amsgrad``
        ``max_exp_avg_sq`` keeps the elementwise maximum of every ``v`` so far and stands for ``v`` below. With
        ``m_hat = m / (1 - beta1 ** t)`` and ``v_hat = v / (1 - beta2 ** t)``, the parameter array is changed in
        place by ``p -= lr * m_hat / (sqrt(v_hat) + eps)``."""
'''
AD_GOLDEN = "\n\n" + AD_HEAD + AD_DOC + AD_BODY
AD_DRIVER = '''"""Fit a small tanh network to a noisy regression target with AdamW: python train.py"""

import numpy as np

from optim.adam import Adam


class MLP:
    def __init__(self, rng, n_in, n_hidden, n_out):
        self.w1 = rng.normal(scale=n_in ** -0.5, size=(n_in, n_hidden))
        self.b1 = np.zeros(n_hidden)
        self.w2 = rng.normal(scale=n_hidden ** -0.5, size=(n_hidden, n_out))
        self.b2 = np.zeros(n_out)

    def params(self):
        return [self.w1, self.b1, self.w2, self.b2]

    def loss_and_grads(self, x, y):
        h = np.tanh(x @ self.w1 + self.b1)
        err = h @ self.w2 + self.b2 - y
        loss = float(np.mean(np.sum(err ** 2, axis=1)) / 2)
        d_out = err / len(x)
        d_h = d_out @ self.w2.T * (1.0 - h ** 2)
        return loss, [x.T @ d_h, d_h.sum(axis=0), h.T @ d_out, d_out.sum(axis=0)]


def main():
    rng = np.random.default_rng(0)
    model = MLP(rng, 4, 16, 2)
    true_w = rng.normal(size=(4, 2))
    optimizer = Adam(model.params(), lr=0.01)
    for step in range(12):
        x = rng.normal(size=(32, 4))
        y = np.sin(x @ true_w) + 0.05 * rng.normal(size=(32, 2))
        loss, grads = model.loss_and_grads(x, y)
        optimizer.step(grads)
        if step % 3 == 2:
            print(f"step {step}: loss {loss:.4f}, |w1| {np.linalg.norm(model.w1):.4f}")


if __name__ == "__main__":
    main()
'''

_ad = editor(AD_HEAD, AD_BODY)

AD_WRONG = {
    "bias correction one step ahead": _ad('''            m_hat = m / (1.0 - beta1 ** t)
            v_hat = v / (1.0 - beta2 ** t)
''', '''            m_hat = m / (1.0 - beta1 ** (t + 1))
            v_hat = v / (1.0 - beta2 ** (t + 1))
'''),
    "second moment not bias-corrected": _ad("v_hat = v / (1.0 - beta2 ** t)", "v_hat = v"),
    "eps under the square root": _ad("np.sqrt(v_hat) + self.eps", "np.sqrt(v_hat + self.eps)"),
    "decoupled decay without the learning rate": _ad("p *= 1.0 - self.lr * self.weight_decay",
                                                     "p *= 1.0 - self.weight_decay"),
    "decay always decoupled": _ad('''                if self.decoupled:
                    p *= 1.0 - self.lr * self.weight_decay
                else:
                    g = g + self.weight_decay * p
''', '''                p *= 1.0 - self.lr * self.weight_decay
'''),
    "coupled decay added into the caller's gradient": _ad("g = g + self.weight_decay * p",
                                                          "g += self.weight_decay * p"),
    "amsgrad maximum aliases the second moment": _ad('''                if self.amsgrad:
                    state["max_exp_avg_sq"] = np.zeros_like(p)
''', '''                if self.amsgrad:
                    state["max_exp_avg_sq"] = state["exp_avg_sq"]
'''),
    "amsgrad ignored": _ad('''            if self.amsgrad:
                np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
                v = state["max_exp_avg_sq"]
''', ""),
    "one step count shared by the parameters": _ad('''            state["step"] += 1
            t = state["step"]
''', '''            self.t = getattr(self, "t", 0) + 1
            t = self.t
'''),
}
AD_RIGHT = {
    "step size folded into the learning rate": AD_HEAD + '''        b1, b2 = self.betas
        for i, p in enumerate(self.params):
            st = self.state[i]
            if "step" not in st:
                st.update(step=0, exp_avg=np.zeros_like(p), exp_avg_sq=np.zeros_like(p))
                if self.amsgrad:
                    st["max_exp_avg_sq"] = np.zeros_like(p)
            st["step"] += 1
            grad = grads[i]
            if self.weight_decay and not self.decoupled:
                grad = grad + self.weight_decay * p
            if self.weight_decay and self.decoupled:
                p -= self.lr * self.weight_decay * p
            st["exp_avg"] += (1.0 - b1) * (grad - st["exp_avg"])
            st["exp_avg_sq"] += (1.0 - b2) * (grad * grad - st["exp_avg_sq"])
            second = st["exp_avg_sq"]
            if self.amsgrad:
                st["max_exp_avg_sq"][...] = np.maximum(st["max_exp_avg_sq"], second)
                second = st["max_exp_avg_sq"]
            correction2 = math.sqrt(1.0 - b2 ** st["step"])
            step_size = self.lr * correction2 / (1.0 - b1 ** st["step"])
            p -= step_size * st["exp_avg"] / (np.sqrt(second) + self.eps * correction2)
''',
    "computed functionally, written back": AD_HEAD + '''        beta1, beta2 = self.betas
        for p, g, state in zip(self.params, grads, self.state):
            t = state.get("step", 0) + 1
            state["step"] = t
            names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if self.amsgrad else ())
            for name in names:
                state.setdefault(name, np.zeros_like(p))
            decay = self.weight_decay
            w = p * (1.0 - self.lr * decay) if decay and self.decoupled else p
            if decay and not self.decoupled:
                g = np.add(g, decay * p)
            m = beta1 * state["exp_avg"] + (1.0 - beta1) * g
            v = beta2 * state["exp_avg_sq"] + (1.0 - beta2) * np.square(g)
            state["exp_avg"][...] = m
            state["exp_avg_sq"][...] = v
            if self.amsgrad:
                v = np.maximum(state["max_exp_avg_sq"], v)
                state["max_exp_avg_sq"][...] = v
            update = (m / (1.0 - beta1 ** t)) / (np.sqrt(v / (1.0 - beta2 ** t)) + self.eps)
            p[...] = w - self.lr * update
''',
}


def ad_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of ``step`` on general settings: several parameters of other shapes, other betas, eps and learning
    rates, decoupled and coupled decay, no decay, AMSGrad, gradients that shrink so that the second moments fall;
    each gives the arrays the caller holds (parameters and gradients) after the steps."""
    rng = np.random.default_rng(47)
    calls = []
    for lr, betas, eps, decay, decoupled, amsgrad, steps in ((1e-3, (0.9, 0.999), 1e-8, 1e-2, True, False, 4),
                                                             (0.05, (0.8, 0.99), 1e-6, 0.1, False, False, 5),
                                                             (0.01, (0.9, 0.999), 1e-8, 0.0, True, True, 6),
                                                             (0.02, (0.5, 0.9), 1e-3, 0.05, True, True, 5),
                                                             (0.03, (0.9, 0.95), 1e-8, 0.02, False, True, 4)):
        shapes = [(3, 2), (4,), (2, 2, 2)]
        start = [rng.normal(size=s) for s in shapes]
        grads = [[rng.normal(size=s) * 4.0 ** -k for s in shapes] for k in range(steps)]

        def call(lr=lr, betas=betas, eps=eps, decay=decay, dec=decoupled, ams=amsgrad, p0=start, gs=grads) -> object:
            params = [p.copy() for p in p0]
            given = [[g.copy() for g in gg] for gg in gs]
            opt = ns["Adam"](params, lr, betas, eps, decay, dec, ams)
            for gg in given:
                opt.step(gg)
            return [p.copy() for p in params], given

        calls.append(call)
    return calls


# -- Batch-hard triplet loss (Hermans, Beyer and Leibe 2017) -------------------------------------------------------

TR_SIG = "def batch_hard_triplet_loss(embeddings, labels, margin=0.3, squared=False, soft_margin=False):\n"
TR_BODY = '''    dot = embeddings @ embeddings.T
    sq_norm = np.diag(dot)
    sq = sq_norm[:, None] - 2.0 * dot + sq_norm[None, :]
    sq = np.maximum(sq, 0.0)
    dist = sq if squared else np.sqrt(sq)
    same = labels[:, None] == labels[None, :]
    positive = same & ~np.eye(len(labels), dtype=bool)
    negative = ~same
    valid = positive.any(axis=1) & negative.any(axis=1)
    if not valid.any():
        return 0.0
    hardest_pos = np.where(positive, dist, -np.inf).max(axis=1)
    hardest_neg = np.where(negative, dist, np.inf).min(axis=1)
    gap = hardest_pos[valid] - hardest_neg[valid]
    if soft_margin:
        losses = np.log1p(np.exp(gap))
    else:
        losses = np.maximum(gap + margin, 0.0)
    return float(losses.mean())
'''
TR_DOC = '''    """Batch-hard triplet loss (Hermans et al. 2017) of ``embeddings`` (n, d) with integer class ``labels``
    (n,). Distances are Euclidean, from the Gram matrix as ``|a|^2 - 2 a.b + |b|^2`` clamped at 0 before the
    square root (``squared``: the clamped squared distances themselves). For each anchor the hardest positive is
    the farthest other sample of its class and the hardest negative the nearest sample of another class; the loss
    is ``max(d_ap - d_an + margin, 0)``, or with ``soft_margin`` ``log(1 + exp(d_ap - d_an))`` (no margin).
    Anchors without a positive or without a negative are left out; the result is the mean over the other
    anchors, 0.0 when there are none."""
'''
TR_GOLDEN = "\n\n" + TR_SIG + TR_DOC + TR_BODY
TR_DRIVER = '''"""Learn a 2-D embedding of Gaussian classes with the batch-hard triplet loss: python train_embed.py"""

import numpy as np

from metric.losses import batch_hard_triplet_loss


def pk_batch(rng, centres, p, k):
    """P classes, K samples of each."""
    classes = rng.choice(len(centres), size=p, replace=False)
    labels = np.repeat(classes, k)
    return centres[labels] + rng.normal(size=(p * k, centres.shape[1])), labels


def main():
    rng = np.random.default_rng(0)
    centres = 2.0 * rng.normal(size=(4, 3))
    w = 0.3 * rng.normal(size=(3, 2))
    for step in range(3):
        x, labels = pk_batch(rng, centres, 3, 4)
        loss = batch_hard_triplet_loss(x @ w, labels)
        grad = np.zeros_like(w)
        for idx in np.ndindex(*w.shape):
            bump = np.zeros_like(w)
            bump[idx] = 1e-4
            up = batch_hard_triplet_loss(x @ (w + bump), labels)
            down = batch_hard_triplet_loss(x @ (w - bump), labels)
            grad[idx] = (up - down) / 2e-4
        w -= 0.5 * grad
        print(f"step {step}: triplet loss {loss:.4f}")


if __name__ == "__main__":
    main()
'''

_tr = editor(TR_SIG, TR_BODY)

TR_WRONG = {
    "anchor its own positive": _tr("positive = same & ~np.eye(len(labels), dtype=bool)", "positive = same"),
    "anchors without a triplet in the mean": _tr("gap = hardest_pos[valid] - hardest_neg[valid]",
                                                 "gap = hardest_pos - hardest_neg"),
    "hardest negative the farthest": _tr("hardest_neg = np.where(negative, dist, np.inf).min(axis=1)",
                                         "hardest_neg = np.where(negative, dist, -np.inf).max(axis=1)"),
    "squared ignored": _tr("dist = sq if squared else np.sqrt(sq)", "dist = np.sqrt(sq)"),
    "soft margin keeps the margin": _tr("losses = np.log1p(np.exp(gap))", "losses = np.log1p(np.exp(gap + margin))"),
    "hinge dropped": _tr("losses = np.maximum(gap + margin, 0.0)", "losses = gap + margin"),
    "distance clamp dropped": _tr("    sq = np.maximum(sq, 0.0)\n", ""),
    "empty batch guard dropped": _tr('''    if not valid.any():
        return 0.0
''', ""),
    "pins margin": _tr("losses = np.maximum(gap + margin, 0.0)", "losses = np.maximum(gap + 0.3, 0.0)"),
}
TR_RIGHT = {
    "anchor by anchor": TR_SIG + '''    n = len(labels)
    terms = []
    for a in range(n):
        d = np.maximum(np.sum(embeddings ** 2, axis=1) - 2.0 * embeddings @ embeddings[a]
                       + embeddings[a] @ embeddings[a], 0.0)
        if not squared:
            d = np.sqrt(d)
        pos = [d[j] for j in range(n) if j != a and labels[j] == labels[a]]
        neg = [d[j] for j in range(n) if labels[j] != labels[a]]
        if not pos or not neg:
            continue
        diff = max(pos) - min(neg)
        terms.append(np.logaddexp(0.0, diff) if soft_margin else max(diff + margin, 0.0))
    return float(np.mean(terms)) if terms else 0.0
''',
    "pairwise differences and masked arrays": TR_SIG + '''    diff = embeddings[:, None, :] - embeddings[None, :, :]
    dist = np.einsum("ijk,ijk->ij", diff, diff)
    if not squared:
        dist = np.sqrt(dist)
    same = np.equal.outer(labels, labels)
    np.fill_diagonal(same, False)
    other = np.not_equal.outer(labels, labels)
    pos = np.ma.masked_array(dist, mask=~same).max(axis=1)
    neg = np.ma.masked_array(dist, mask=~other).min(axis=1)
    keep = ~(np.ma.getmaskarray(pos) | np.ma.getmaskarray(neg))
    if keep.sum() == 0:
        return 0.0
    delta = np.asarray(pos)[keep] - np.asarray(neg)[keep]
    per_anchor = np.logaddexp(0.0, delta) if soft_margin else np.clip(delta + margin, 0.0, None)
    return float(np.sum(per_anchor) / keep.sum())
''',
}


def tr_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``batch_hard_triplet_loss`` on general inputs: class-balanced batches and unbalanced ones with
    singleton classes, near-duplicate samples across classes, other margins, squared distances, the soft margin,
    and a batch of one class (no anchor has a negative)."""
    rng = np.random.default_rng(47)
    f = ns["batch_hard_triplet_loss"]
    calls = []
    for labels, dim, margin, squared, soft, near in (([0, 0, 1, 1, 2, 2, 3, 3], 3, 0.3, False, False, False),
                                                     ([0, 0, 0, 1, 2, 2, 3], 4, 0.5, False, False, True),
                                                     ([1, 1, 2, 2, 2, 5, 5, 7], 2, 1.0, True, False, False),
                                                     ([0, 1, 1, 0, 2, 2, 3], 3, 0.3, False, True, True),
                                                     ([0, 0, 1, 1, 1, 2], 5, 0.2, True, True, False),
                                                     ([4, 4, 4, 4, 4], 3, 0.3, False, False, False),
                                                     ([0, 1, 2, 0, 1, 2, 0, 1, 2], 2, 2.0, False, False, True)):
        lab = np.array(labels)
        emb = rng.normal(size=(len(lab), dim))
        if near:  # samples of other classes almost on top of each other
            for i, j in ((0, 1), (2, 4), (3, 5)):
                emb[j] = emb[i] + 1e-9 * rng.normal(size=dim)
        calls.append(lambda e=emb, y=lab, k=(margin, squared, soft): f(e, y, *k))
    return calls


# -- ALiBi causal attention (Press, Smith and Lewis 2022) ---------------------------------------------------------

AL_CONFIG = '''"""Model configuration."""

from dataclasses import dataclass, field


@dataclass
class AttnConfig:
    n_heads: int = 8
    max_bias: float = 8.0


@dataclass
class ModelConfig:
    vocab: int = 40
    d_model: int = 32


@dataclass
class Config:
    model: ModelConfig = field(default_factory=ModelConfig)
    attn: AttnConfig = field(default_factory=AttnConfig)
'''
AL_HEAD = '''class AlibiSelfAttention:
    """Causal multi-head self-attention with ALiBi position biases (Press et al. 2022) in place of position
    embeddings."""

    def __init__(self, cfg, rng):
        self.cfg = cfg
        d = cfg.model.d_model
        self.w_qkv = rng.normal(scale=d ** -0.5, size=(d, 3 * d))
        self.w_out = rng.normal(scale=d ** -0.5, size=(d, d))

    def _split_heads(self, x):
        batch, seq, d = x.shape
        heads = self.cfg.attn.n_heads
        return x.reshape(batch, seq, heads, d // heads).transpose(0, 2, 1, 3)

    def forward(self, x, padding_mask):
        q, k, v = np.split(x @ self.w_qkv, 3, axis=-1)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)
        probs = self.attention_probs(q, k, padding_mask)
        out = (probs @ v).transpose(0, 2, 1, 3).reshape(x.shape)
        return out @ self.w_out

    def attention_probs(self, q, k, padding_mask):
'''
AL_BODY = '''        cfg = self.cfg.attn
        n = cfg.n_heads
        seq, dim = q.shape[2], q.shape[3]
        closest = 2 ** int(math.floor(math.log2(n)))
        base = 2.0 ** (-cfg.max_bias / closest)
        slopes = base ** np.arange(1, closest + 1)
        if closest < n:
            extra = 2.0 ** (-cfg.max_bias / (2 * closest))
            slopes = np.concatenate([slopes, (extra ** np.arange(1, 2 * closest + 1, 2))[: n - closest]])
        scores = q @ k.swapaxes(-1, -2) / math.sqrt(dim)
        pos = np.arange(seq)
        distance = pos[None, :] - pos[:, None]
        scores = scores + slopes[:, None, None] * distance
        allowed = (distance <= 0)[None, None] & (padding_mask[:, None, None, :] > 0)
        scores = np.where(allowed, scores, -np.inf)
        top = scores.max(axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        weights = np.exp(scores - top) * allowed
        total = weights.sum(axis=-1, keepdims=True)
        return weights / np.where(total > 0, total, 1.0)
'''
AL_DOC = '''        """Attention probabilities (batch, heads, seq, seq) of queries ``q`` and keys ``k``, both
        (batch, heads, seq, head_dim) with ``heads == cfg.attn.n_heads``; ``padding_mask`` (batch, seq) is 1 for
        a real token, 0 for padding. Scores are ``q.k / sqrt(head_dim)`` plus ALiBi's bias
        ``slope_h * (j - i)`` for query i and key j. The slopes of n heads: with c the largest power of two not
        above n, the geometric sequence ``r ** 1, ..., r ** c`` with ``r = 2 ** (-cfg.attn.max_bias / c)``, then,
        when n > c, the first n - c of the odd-numbered terms ``s ** 1, s ** 3, ...`` of the sequence for 2c
        heads, ``s = 2 ** (-max_bias / (2c))``. A query sees the keys at or before it that are not padding; the
        softmax runs over those, and a query that sees none gets all-zero probabilities."""
'''
AL_GOLDEN = "\n\n" + AL_HEAD + AL_DOC + AL_BODY
AL_DRIVER = '''"""Score right-padded token batches with a one-layer ALiBi language model: python evaluate_lm.py"""

import numpy as np

from alibi.attention import AlibiSelfAttention
from alibi.config import Config


def main():
    cfg = Config()
    rng = np.random.default_rng(0)
    embed = rng.normal(scale=0.5, size=(cfg.model.vocab, cfg.model.d_model))
    attn = AlibiSelfAttention(cfg, rng)
    for batch in range(3):
        lengths = rng.integers(3, 9, size=4)
        tokens = rng.integers(0, cfg.model.vocab, size=(4, 8))
        mask = (np.arange(8)[None, :] < lengths[:, None]).astype(np.int64)
        tokens = tokens * mask
        h = embed[tokens]
        h = h + attn.forward(h, mask)
        logits = h @ embed.T
        logits -= logits.max(axis=-1, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        nll = -np.take_along_axis(logp[:, :-1], tokens[:, 1:, None], axis=-1)[..., 0]
        real = mask[:, 1:]
        print(f"batch {batch}: lengths {lengths.tolist()}, next-token NLL {(nll * real).sum() / real.sum():.4f}")


if __name__ == "__main__":
    main()
'''

_al = editor(AL_HEAD, AL_BODY)

AL_WRONG = {
    "every head's slope from one sequence": _al('''        closest = 2 ** int(math.floor(math.log2(n)))
        base = 2.0 ** (-cfg.max_bias / closest)
        slopes = base ** np.arange(1, closest + 1)
        if closest < n:
            extra = 2.0 ** (-cfg.max_bias / (2 * closest))
            slopes = np.concatenate([slopes, (extra ** np.arange(1, 2 * closest + 1, 2))[: n - closest]])
''', '''        slopes = (2.0 ** (-cfg.max_bias / n)) ** np.arange(1, n + 1)
'''),
    "extra slopes from the even terms": _al("(extra ** np.arange(1, 2 * closest + 1, 2))",
                                            "(extra ** np.arange(2, 2 * closest + 1, 2))"),
    "pins max_bias": _al("base = 2.0 ** (-cfg.max_bias / closest)", "base = 2.0 ** (-8.0 / closest)").replace(
        "extra = 2.0 ** (-cfg.max_bias / (2 * closest))", "extra = 2.0 ** (-8.0 / (2 * closest))"),
    "bias rewards distance": _al("distance = pos[None, :] - pos[:, None]", "distance = pos[:, None] - pos[None, :]"
                                 ).replace("(distance <= 0)", "(distance >= 0)"),
    "scores not scaled": _al("scores = q @ k.swapaxes(-1, -2) / math.sqrt(dim)", "scores = q @ k.swapaxes(-1, -2)"),
    "padding mask ignored": _al("allowed = (distance <= 0)[None, None] & (padding_mask[:, None, None, :] > 0)",
                                "allowed = np.broadcast_to((distance <= 0)[None, None], scores.shape)"),
    "padding masks the queries": _al("(padding_mask[:, None, None, :] > 0)", "(padding_mask[:, None, :, None] > 0)"),
    "a query does not see itself": _al("(distance <= 0)[None, None]", "(distance < 0)[None, None]"),
    "no guard for queries that see nothing": _al("        top = np.where(np.isfinite(top), top, 0.0)\n", "").replace(
        "return weights / np.where(total > 0, total, 1.0)", "return weights / total"),
}
AL_RIGHT = {
    "slopes by a recursive helper, large negative fill": AL_HEAD + '''        heads = self.cfg.attn.n_heads
        slopes = np.array(_alibi_slopes(heads, self.cfg.attn.max_bias))
        _, _, length, head_dim = q.shape
        logits = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(head_dim)
        i = np.arange(length)[:, None]
        j = np.arange(length)[None, :]
        logits = logits - slopes[:, None, None] * (i - j)
        visible = np.logical_and(j <= i, padding_mask.astype(bool)[:, None, None, :])
        logits = np.where(visible, logits, -1e30)
        logits = logits - logits.max(axis=-1, keepdims=True)
        e = np.exp(logits) * visible
        z = e.sum(axis=-1, keepdims=True)
        return np.divide(e, z, out=np.zeros_like(e), where=z > 0)


def _alibi_slopes(n, max_bias):
    def power_of_two(m):
        start = 2.0 ** (-max_bias / m)
        return [start ** (h + 1) for h in range(m)]

    if math.log2(n).is_integer():
        return power_of_two(n)
    c = 2 ** math.floor(math.log2(n))
    return power_of_two(c) + _alibi_slopes(2 * c, max_bias)[0::2][: n - c]
''',
    "a loop over batch, head and query": AL_HEAD + '''        n_heads = self.cfg.attn.n_heads
        bias = self.cfg.attn.max_bias
        c = 1
        while 2 * c <= n_heads:
            c *= 2
        slopes = [2.0 ** (-bias * (h + 1) / c) for h in range(c)]
        slopes += [2.0 ** (-bias * (2 * h + 1) / (2 * c)) for h in range(n_heads - c)]
        batch, _, seq, d = q.shape
        probs = np.zeros((batch, n_heads, seq, seq))
        for b in range(batch):
            for h in range(n_heads):
                for i in range(seq):
                    keys = [j for j in range(i + 1) if padding_mask[b, j]]
                    if not keys:
                        continue
                    s = np.array([q[b, h, i] @ k[b, h, j] / math.sqrt(d) - slopes[h] * (i - j) for j in keys])
                    e = np.exp(s - s.max())
                    probs[b, h, i, keys] = e / e.sum()
        return probs
''',
}


def al_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``attention_probs`` on general settings: head counts that are and are not powers of two (one,
    three, six, eight, twelve), another ``max_bias``, right and left padding (queries that see no key), no
    padding."""
    rng = np.random.default_rng(47)
    calls = []
    for heads, max_bias, batch, seq, dim, padding in ((8, 8.0, 2, 5, 4, "right"), (6, 8.0, 2, 6, 3, "left"),
                                                      (12, 8.0, 1, 7, 2, "none"), (3, 4.0, 3, 5, 4, "left"),
                                                      (1, 8.0, 2, 4, 3, "right"), (5, 16.0, 2, 6, 2, "right")):
        cfg = SimpleNamespace(model=SimpleNamespace(d_model=heads * dim, vocab=10),
                              attn=SimpleNamespace(n_heads=heads, max_bias=max_bias))
        q = rng.normal(size=(batch, heads, seq, dim))
        k = rng.normal(size=(batch, heads, seq, dim))
        lengths = rng.integers(1, seq, size=batch)
        lengths[0] = seq - 2
        pos = np.arange(seq)[None, :]
        if padding == "right":
            mask = (pos < lengths[:, None]).astype(np.int64)
        elif padding == "left":
            mask = (pos >= seq - lengths[:, None]).astype(np.int64)
        else:
            mask = np.ones((batch, seq), dtype=np.int64)

        def call(cfg=cfg, q=q, k=k, mask=mask) -> object:
            layer = ns["AlibiSelfAttention"](cfg, np.random.default_rng(0))
            return layer.attention_probs(q, k, mask)

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
_MATH_NP = "import math\n\nimport numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "29-AdamW", "files": {"optim/__init__.py": "", "optim/adam.py":
     '"""Adaptive optimisers over lists of numpy arrays."""\n\nimport numpy as np\n' + AD_GOLDEN,
     "train.py": AD_DRIVER},
     "function": "optim/adam.py::Adam.step", "command": "python train.py", "head": _MATH_NP,
     "wrong": AD_WRONG, "right": AD_RIGHT, "check": ad_check,
     "gaps": {"bias correction one step ahead": ["beta1 ** t", "beta2 ** t"],
              "second moment not bias-corrected": ["(1.0 - beta2 ** t)"], "eps under the square root": ["self.eps"],
              "decoupled decay without the learning rate": ["self.lr * self.weight_decay"],
              "decay always decoupled": ["decoupled"],
              "coupled decay added into the caller's gradient": ["g = g + self.weight_decay * p"],
              "amsgrad maximum aliases the second moment": ["max_exp_avg_sq"], "amsgrad ignored": ["amsgrad"],
              "one step count shared by the parameters": ['state["step"]']}},
    {"name": "30-BatchHardTriplet", "files": {"metric/__init__.py": "", "metric/losses.py":
     '"""Metric-learning losses."""\n\nimport numpy as np\n' + TR_GOLDEN, "train_embed.py": TR_DRIVER},
     "function": "metric/losses.py::batch_hard_triplet_loss", "command": "python train_embed.py", "head": _NP,
     "wrong": TR_WRONG, "right": TR_RIGHT, "check": tr_check,
     "gaps": {"anchor its own positive": ["np.eye(len(labels), dtype=bool)"],
              "anchors without a triplet in the mean": ["hardest_pos[valid]", "valid"],
              "hardest negative the farthest": [".min(axis=1)"], "squared ignored": ["squared"],
              "soft margin keeps the margin": ["soft_margin"], "hinge dropped": ["np.maximum(gap + margin, 0.0)"],
              "distance clamp dropped": ["np.maximum(sq, 0.0)"], "empty batch guard dropped": ["valid.any()"],
              "pins margin": ["margin"]}},
    {"name": "31-ALiBiAttention", "files": {"alibi/__init__.py": "", "alibi/config.py": AL_CONFIG,
     "alibi/attention.py": '"""Attention with linear biases."""\n\nimport math\n\nimport numpy as np\n' + AL_GOLDEN,
     "evaluate_lm.py": AL_DRIVER},
     "function": "alibi/attention.py::AlibiSelfAttention.attention_probs", "command": "python evaluate_lm.py",
     "head": _MATH_NP, "wrong": AL_WRONG, "right": AL_RIGHT, "check": al_check,
     "gaps": {"every head's slope from one sequence": ["closest < n", "n_heads"],
              "extra slopes from the even terms": ["np.arange(1, 2 * closest + 1, 2)"], "pins max_bias": ["max_bias"],
              "bias rewards distance": ["pos[None, :] - pos[:, None]"], "scores not scaled": ["math.sqrt(dim)"],
              "padding mask ignored": ["padding_mask"], "padding masks the queries": ["padding_mask[:, None, None, :]"],
              "a query does not see itself": ["distance <= 0"],
              "no guard for queries that see nothing": ["np.isfinite(top)", "total > 0"]}},
]
"""The sixth fresh held-out tasks."""
