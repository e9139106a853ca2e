"""Four numpy tasks for ``wrong_answers.py``, each a small repository whose driver calls the goal function with
its default hyperparameters (the commonest shape of real drivers), with plausible wrong answers and correct
answers in other styles. Kept apart from the tests that tune the amplifier: nothing here is read by tests/.

Each task: ``files`` (the repository), ``function`` (``file::qualname``), ``command`` (the driver), ``head``
(what a candidate's goal file starts with), ``wrong`` and ``right`` (``{what: body}``, each completed by
``head`` into a whole goal file).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

CE_GOLDEN = '''

def label_smoothed_nll(logits, targets, epsilon=0.1, ignore_index=-100, reduction="mean"):
    """Label-smoothed cross-entropy over tokens; ``ignore_index`` targets count for nothing.

    logits: (batch, seq, vocab); targets: (batch, seq); reduction: "mean" over the counted tokens, "sum", or
    "none" (per token, 0 where ignored). With every target ignored the mean is 0.
    """
    lprobs = logits - logits.max(axis=-1, keepdims=True)
    lprobs = lprobs - np.log(np.exp(lprobs).sum(axis=-1, keepdims=True))
    pad = targets == ignore_index
    safe = np.where(pad, 0, targets)
    nll = -np.take_along_axis(lprobs, safe[..., None], axis=-1)[..., 0]
    smooth = -lprobs.mean(axis=-1)
    loss = (1.0 - epsilon) * nll + epsilon * smooth
    loss = np.where(pad, 0.0, loss)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / max(int((~pad).sum()), 1)
'''
CE_DRIVER = '''"""Evaluate a random bigram model on padded batches: python evaluate.py"""

import numpy as np

from seqloss.losses import label_smoothed_nll


def main():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(11, 11))
    for step in range(4):
        tokens = rng.integers(0, 11, size=(3, 6))
        targets = np.roll(tokens, -1, axis=1)
        targets[:, -1] = -100
        targets[step % 3, 4:] = -100  # a shorter sequence, padded
        loss = label_smoothed_nll(table[tokens], targets)
        print(f"batch {step}: loss {loss:.4f}")


if __name__ == "__main__":
    main()
'''
CE_SIG = 'def label_smoothed_nll(logits, targets, epsilon=0.1, ignore_index=-100, reduction="mean"):\n'
CE_LP = '''    lprobs = logits - logits.max(-1, keepdims=True)
    lprobs = lprobs - np.log(np.exp(lprobs).sum(-1, keepdims=True))
'''
CE_BODY = CE_LP + '''    pad = targets == ignore_index
    nll = -np.take_along_axis(lprobs, np.where(pad, 0, targets)[..., None], -1)[..., 0]
    loss = (1 - epsilon) * nll - epsilon * lprobs.mean(-1)
    loss = np.where(pad, 0.0, loss)
'''


def _ce(body: str, tail: str = "") -> str:
    return CE_SIG + body + tail


CE_TAIL = '''    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / max(int((~pad).sum()), 1)
'''

CE_WRONG = {
    "ignores reduction": _ce(CE_BODY, "    return loss.sum() / max(int((~pad).sum()), 1)\n"),
    "padding as targets < 0": _ce(CE_BODY.replace("targets == ignore_index", "targets < 0"), CE_TAIL),
    "mean over every token": _ce(CE_BODY, CE_TAIL.replace("max(int((~pad).sum()), 1)", "loss.size")),
    "NaN when every target is ignored": _ce(CE_BODY, CE_TAIL.replace("max(int((~pad).sum()), 1)", "(~pad).sum()")),
    "pins epsilon": _ce("    epsilon = 0.1\n" + CE_BODY, CE_TAIL),
    "pins ignore_index": _ce(CE_BODY.replace("targets == ignore_index", "targets == -100"), CE_TAIL),
    "smoothing over the other classes": _ce(CE_BODY.replace(
        "- epsilon * lprobs.mean(-1)", "- epsilon * (lprobs.sum(-1) - np.take_along_axis(lprobs, np.where(pad, 0, "
        "targets)[..., None], -1)[..., 0]) / (lprobs.shape[-1] - 1)"), CE_TAIL),
    "sum and mean swapped": _ce(CE_BODY, CE_TAIL.replace('"sum"', '"mean"')),
    "none keeps the padded losses": _ce(CE_BODY.replace("    loss = np.where(pad, 0.0, loss)\n", ""),
                                        CE_TAIL.replace("loss.sum()", "np.where(pad, 0.0, loss).sum()")),
    "smoothing summed over the vocabulary": _ce(CE_BODY.replace("lprobs.mean(-1)", "lprobs.sum(-1)"), CE_TAIL),
    "mean over sequences": _ce(CE_BODY, CE_TAIL.replace("max(int((~pad).sum()), 1)", "loss.shape[0]")),
    "smoothing term unmasked": _ce(CE_BODY.replace("loss = np.where(pad, 0.0, loss)",
                                                   "loss = np.where(pad, -epsilon * lprobs.mean(-1), loss)"), CE_TAIL),
}
CE_RIGHT = {
    "one-hot smoothed targets": _ce('''    lp = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)
    valid = targets != ignore_index
    q = np.full(lp.shape, epsilon / lp.shape[-1])
    idx = np.where(valid, targets, 0)
    np.put_along_axis(q, idx[..., None], q[0, 0, 0] + 1 - epsilon, axis=-1)
    per = -(q * lp).sum(-1) * valid
    if reduction == "none":
        return per
    if reduction == "sum":
        return per.sum()
    return per.sum() / max(valid.sum(), 1)
'''),
    "loop over tokens": _ce(CE_LP + '''    out = np.zeros(targets.shape)
    for b in range(targets.shape[0]):
        for t in range(targets.shape[1]):
            if targets[b, t] != ignore_index:
                row = lprobs[b, t]
                out[b, t] = -(1 - epsilon) * row[targets[b, t]] - epsilon * row.sum() / row.size
    count = int((targets != ignore_index).sum())
    return {"none": out, "sum": out.sum()}.get(reduction, out.sum() / count if count else 0.0)
'''),
    "float mask": _ce(CE_BODY.replace("    loss = np.where(pad, 0.0, loss)\n", "    keep = (~pad).astype(float)\n"
                                      "    loss = np.where(pad, 0.0, loss) * keep\n"), CE_TAIL.replace(
        "max(int((~pad).sum()), 1)", "max(keep.sum(), 1.0)")),
    "boolean indexing": _ce(CE_BODY, '''    if reduction == "none":
        return loss
    kept = loss[~pad]
    if reduction == "sum":
        return kept.sum()
    return kept.mean() if kept.size else 0.0
'''),
}

FILTER_GOLDEN = '''

def filter_logits(logits, top_k=0, top_p=1.0, temperature=1.0, min_tokens_to_keep=1):
    """Next-token logits divided by ``temperature``, then top-k and top-p (nucleus) filtered: filtered
    entries become -inf. ``top_k`` 0 and ``top_p`` 1.0 turn a filter off; each keeps at least
    ``min_tokens_to_keep`` tokens. Top-p keeps the smallest set of most likely tokens whose probability
    reaches ``top_p`` (the token that crosses it included). logits: (batch, vocab)."""
    scores = logits / temperature
    vocab = scores.shape[-1]
    if top_k > 0:
        k = min(max(top_k, min_tokens_to_keep), vocab)
        kth = np.sort(scores, axis=-1)[..., -k][..., None]
        scores = np.where(scores < kth, -np.inf, scores)
    if top_p < 1.0:
        order = np.argsort(-scores, axis=-1, kind="stable")
        ranked = np.take_along_axis(scores, order, axis=-1)
        probs = np.exp(ranked - ranked[..., :1])
        probs = probs / probs.sum(axis=-1, keepdims=True)
        before = np.cumsum(probs, axis=-1) - probs
        remove = before >= top_p
        remove[..., :min_tokens_to_keep] = False
        mask = np.zeros_like(remove)
        np.put_along_axis(mask, order, remove, axis=-1)
        scores = np.where(mask, -np.inf, scores)
    return scores
'''
FILTER_DRIVER = '''"""Sample a few tokens from random logits with the usual settings: python sample.py"""

import numpy as np

from sampling.filters import filter_logits


def main():
    rng = np.random.default_rng(0)
    for step in range(4):
        logits = rng.normal(scale=2.0, size=(3, 12))
        scores = filter_logits(logits, top_k=6, top_p=0.9, temperature=0.8)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        print(f"step {step}:", [int(rng.choice(12, p=p)) for p in probs])


if __name__ == "__main__":
    main()
'''
F_SIG = "def filter_logits(logits, top_k=0, top_p=1.0, temperature=1.0, min_tokens_to_keep=1):\n"
F_TOPK = '''    scores = logits / temperature
    if top_k > 0:
        k = min(max(top_k, min_tokens_to_keep), scores.shape[-1])
        kth = np.sort(scores, axis=-1)[..., -k][..., None]
        scores = np.where(scores < kth, -np.inf, scores)
'''
F_TOPP = '''    if top_p < 1.0:
        order = np.argsort(-scores, axis=-1, kind="stable")
        ranked = np.take_along_axis(scores, order, axis=-1)
        probs = np.exp(ranked - ranked[..., :1])
        probs = probs / probs.sum(axis=-1, keepdims=True)
        remove = np.cumsum(probs, axis=-1) - probs >= top_p
        remove[..., :min_tokens_to_keep] = False
        mask = np.zeros_like(remove)
        np.put_along_axis(mask, order, remove, axis=-1)
        scores = np.where(mask, -np.inf, scores)
    return scores
'''
F_BODY = F_TOPK + F_TOPP

FILTER_WRONG = {
    "nucleus on untempered logits": F_SIG + F_TOPK.replace("logits / temperature", "logits") + F_TOPP.replace(
        "    return scores\n", "    return scores / temperature\n"),
    "top-k ignores min_tokens_to_keep": F_SIG + F_BODY.replace("max(top_k, min_tokens_to_keep)", "top_k"),
    "min for max": F_SIG + F_BODY.replace("max(top_k, min_tokens_to_keep)", "min(top_k, min_tokens_to_keep)"),
    "crossing token dropped": F_SIG + F_BODY.replace("np.cumsum(probs, axis=-1) - probs >= top_p",
                                                   "np.cumsum(probs, axis=-1) > top_p"),
    "k-th token dropped": F_SIG + F_BODY.replace("scores < kth", "scores <= kth"),
    "ignores temperature": F_SIG + F_BODY.replace("logits / temperature", "logits"),
    "temperature multiplies": F_SIG + F_BODY.replace("logits / temperature", "logits * temperature"),
    "top_k 0 keeps one token": F_SIG + F_BODY.replace("if top_k > 0:", "if top_k >= 0:"),
    "nucleus ignores min_tokens_to_keep": F_SIG + F_BODY.replace("remove[..., :min_tokens_to_keep]",
                                                                 "remove[..., :1]"),
    "nucleus before top-k": F_SIG + "    scores = logits / temperature\n" + F_TOPP.replace(
        "    return scores\n", "") + F_TOPK.replace("    scores = logits / temperature\n", "") + "    return scores\n",
    "nucleus over the unfiltered distribution": F_SIG + F_BODY.replace(
        "ranked = np.take_along_axis(scores, order, axis=-1)",
        "ranked = np.take_along_axis(logits / temperature, order, axis=-1)"),
}
FILTER_RIGHT = {
    "shifted cumulative mask": F_SIG + F_TOPK + '''    if top_p < 1.0:
        idx = np.argsort(scores, axis=-1)[..., ::-1]
        ranked = np.take_along_axis(scores, idx, axis=-1)
        p = np.exp(ranked - np.logaddexp.reduce(ranked, axis=-1, keepdims=True))
        cum = np.cumsum(p, axis=-1)
        drop = np.zeros_like(cum, dtype=bool)
        drop[..., 1:] = cum[..., :-1] >= top_p
        drop[..., :min_tokens_to_keep] = False
        out = scores.copy()
        np.put_along_axis(out, idx, np.where(drop, -np.inf, ranked), axis=-1)
        scores = out
    return scores
''',
    "row by row": F_SIG + '''    out = np.array(logits, dtype=float) / temperature
    for row in out:
        if top_k > 0:
            keep = min(max(top_k, min_tokens_to_keep), row.size)
            row[row < np.sort(row)[-keep]] = -np.inf
        if top_p < 1.0:
            order = np.argsort(-row, kind="stable")
            p = np.exp(row[order] - row[order[0]])
            p /= p.sum()
            mass = 0.0
            for rank, i in enumerate(order):
                if mass >= top_p and rank >= min_tokens_to_keep:
                    row[i] = -np.inf
                mass += p[rank]
    return out
''',
    "softmax helper": F_SIG + F_TOPK + F_TOPP.replace('''        probs = np.exp(ranked - ranked[..., :1])
        probs = probs / probs.sum(axis=-1, keepdims=True)
''', '''        probs = _softmax(ranked)
''') + '''

def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    "kth largest by partition": F_SIG + F_BODY.replace(
        "np.sort(scores, axis=-1)[..., -k][..., None]",
        "np.partition(scores, scores.shape[-1] - k, axis=-1)[..., scores.shape[-1] - k][..., None]"),
}

ROPE_GOLDEN = '''

def apply_rotary(x, positions, base=10000.0, interleaved=False):
    """Rotary position embedding of queries or keys x (seq, heads, dim) at integer ``positions`` (seq,).

    Feature pairs are rotated by ``position * base ** (-2i / dim)``; the pairs are (i, i + dim/2) (the halves),
    or (2i, 2i + 1) when ``interleaved``.
    """
    dim = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    angles = positions[:, None] * inv_freq[None, :]
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = x1 * cos - x2 * sin
        out[..., 1::2] = x1 * sin + x2 * cos
        return out
    half = dim // 2
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
'''
ROPE_DRIVER = '''"""Attention scores with rotary embeddings, a prompt then two cached steps: python attend.py"""

import numpy as np

from rope.embed import apply_rotary


def main():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(5, 2, 8))
    k = rng.normal(size=(5, 2, 8))
    keys = apply_rotary(k, np.arange(5))
    print("prompt scores", np.einsum("shd,thd->hst", apply_rotary(q, np.arange(5)), keys).round(3)[0, 0])
    for pos in (5, 6):
        step_q = rng.normal(size=(1, 2, 8))
        print(pos, np.einsum("shd,thd->hst", apply_rotary(step_q, np.array([pos])), keys).round(3)[0, 0])


if __name__ == "__main__":
    main()
'''
R_SIG = "def apply_rotary(x, positions, base=10000.0, interleaved=False):\n"
R_ANGLES = '''    dim = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    angles = positions[:, None] * inv_freq[None, :]
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
'''
R_PAIRS = '''    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = x1 * cos - x2 * sin
        out[..., 1::2] = x1 * sin + x2 * cos
        return out
    x1, x2 = x[..., :dim // 2], x[..., dim // 2:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
'''
R_BODY = R_ANGLES + R_PAIRS
ROPE_WRONG = {
    "positions from 0": R_SIG + R_BODY.replace("positions[:, None]", "np.arange(x.shape[0])[:, None]"),
    "pins base": R_SIG + "    base = 10000.0\n" + R_BODY,
    "always the halves": R_SIG + R_ANGLES + R_PAIRS[R_PAIRS.index("    x1, x2 = x[..., :dim"):],
    "rotation the other way": R_SIG + R_BODY.replace("x1 * cos - x2 * sin", "x1 * cos + x2 * sin").replace(
        "x1 * sin + x2 * cos", "-x1 * sin + x2 * cos"),
    "frequencies over i / dim": R_SIG + R_BODY.replace("np.arange(0, dim, 2) / dim", "np.arange(dim // 2) / dim"),
    "halves swapped": R_SIG + R_BODY.replace("[x1 * cos - x2 * sin, x1 * sin + x2 * cos]",
                                             "[x1 * sin + x2 * cos, x1 * cos - x2 * sin]"),
    "interleaved rotation the other way": R_SIG + R_BODY.replace(
        "out[..., 0::2] = x1 * cos - x2 * sin", "out[..., 0::2] = x1 * cos + x2 * sin").replace(
        "out[..., 1::2] = x1 * sin + x2 * cos", "out[..., 1::2] = x2 * cos - x1 * sin"),
    "frequencies over dim - 2": R_SIG + R_BODY.replace("np.arange(0, dim, 2) / dim",
                                                       "np.arange(0, dim, 2) / (dim - 2)"),
    "positions from 1": R_SIG + R_BODY.replace("positions[:, None]", "(positions[:, None] + 1)"),
    "repeated angles with rotate-half": R_SIG + R_ANGLES + '''    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return np.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1).reshape(x.shape)
    c, s = np.repeat(cos, 2, axis=-1), np.repeat(sin, 2, axis=-1)
    rotated = np.concatenate([-x[..., dim // 2:], x[..., :dim // 2]], axis=-1)
    return x * c + rotated * s
''',
}
ROPE_RIGHT = {
    "rotate half": R_SIG + R_ANGLES + '''    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return np.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1).reshape(x.shape)
    c, s = np.concatenate([cos, cos], axis=-1), np.concatenate([sin, sin], axis=-1)
    rotated = np.concatenate([-x[..., dim // 2:], x[..., :dim // 2]], axis=-1)
    return x * c + rotated * s
''',
    "complex numbers": R_SIG + '''    dim = x.shape[-1]
    theta = np.outer(positions, base ** (-np.arange(0, dim, 2) / dim))
    turn = np.exp(1j * theta)[:, None, :]
    if interleaved:
        z = (x[..., 0::2] + 1j * x[..., 1::2]) * turn
        return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)
    z = (x[..., :dim // 2] + 1j * x[..., dim // 2:]) * turn
    return np.concatenate([z.real, z.imag], axis=-1)
''',
    "rotation matrices": R_SIG + '''    seq, heads, dim = x.shape
    freqs = np.power(float(base), -np.arange(dim // 2) * 2.0 / dim)
    out = np.empty_like(x)
    for t in range(seq):
        for i, f in enumerate(freqs):
            a = positions[t] * f
            rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
            j, k = (2 * i, 2 * i + 1) if interleaved else (i, i + dim // 2)
            pair = np.stack([x[t, :, j], x[t, :, k]])
            out[t, :, j], out[t, :, k] = rot @ pair
    return out
''',
    "einsum angles": R_SIG + R_BODY.replace("positions[:, None] * inv_freq[None, :]",
                                            "np.einsum('s,f->sf', positions.astype(float), inv_freq)"),
}

BEAM_GOLDEN = '''

class BeamScorer:
    """Ranks finished beam-search hypotheses."""

    def __init__(self, length_penalty=1.0, mode="gnmt", min_length=0):
        self.length_penalty = length_penalty
        self.mode = mode
        self.min_length = min_length

    def final_scores(self, sum_logprobs, lengths):
        """Length-normalised scores of hypotheses with summed log-probabilities ``sum_logprobs`` and
        ``lengths`` (beams,): divided by ``((5 + length) / 6) ** length_penalty`` in "gnmt" mode, by
        ``length ** length_penalty`` in "average" mode, not at all in "none"; hypotheses shorter than
        ``min_length`` score -inf."""
        if self.mode == "gnmt":
            penalty = ((5.0 + lengths) / 6.0) ** self.length_penalty
        elif self.mode == "average":
            penalty = lengths.astype(float) ** self.length_penalty
        else:
            penalty = np.ones_like(sum_logprobs)
        scores = sum_logprobs / penalty
        return np.where(lengths < self.min_length, -np.inf, scores)
'''
BEAM_DRIVER = '''"""Rank the finished hypotheses of two toy beam searches: python search.py"""

import numpy as np

from beams.scoring import BeamScorer


def main():
    rng = np.random.default_rng(0)
    scorer = BeamScorer()
    for search in range(3):
        lengths = rng.integers(2, 12, size=5)
        sum_logprobs = -rng.uniform(0.5, 2.0, size=5) * lengths
        scores = scorer.final_scores(sum_logprobs, lengths)
        print(f"search {search}: best {int(scores.argmax())} of {scores.round(3).tolist()}")


if __name__ == "__main__":
    main()
'''
B_HEAD = '''class BeamScorer:
    def __init__(self, length_penalty=1.0, mode="gnmt", min_length=0):
        self.length_penalty = length_penalty
        self.mode = mode
        self.min_length = min_length

    def final_scores(self, sum_logprobs, lengths):
'''
B_BODY = '''        if self.mode == "gnmt":
            penalty = ((5.0 + lengths) / 6.0) ** self.length_penalty
        elif self.mode == "average":
            penalty = lengths.astype(float) ** self.length_penalty
        else:
            penalty = np.ones_like(sum_logprobs)
        return np.where(lengths < self.min_length, -np.inf, sum_logprobs / penalty)
'''
BEAM_WRONG = {
    "ignores mode": B_HEAD + '''        penalty = ((5.0 + lengths) / 6.0) ** self.length_penalty
        return np.where(lengths < self.min_length, -np.inf, sum_logprobs / penalty)
''',
    "gnmt without the exponent": B_HEAD + B_BODY.replace("((5.0 + lengths) / 6.0) ** self.length_penalty",
                                                         "(5.0 + lengths) / 6.0"),
    "pins length_penalty": B_HEAD + B_BODY.replace("self.length_penalty", "1.0"),
    "average without the exponent": B_HEAD + B_BODY.replace("lengths.astype(float) ** self.length_penalty",
                                                            "lengths.astype(float)"),
    "ignores min_length": B_HEAD + B_BODY.replace("np.where(lengths < self.min_length, -np.inf, "
                                                  "sum_logprobs / penalty)", "sum_logprobs / penalty"),
    "min_length inclusive": B_HEAD + B_BODY.replace("lengths < self.min_length", "lengths <= self.min_length"),
    "exponent on the numerator only": B_HEAD + B_BODY.replace("((5.0 + lengths) / 6.0) ** self.length_penalty",
                                                              "(5.0 + lengths) ** self.length_penalty / 6.0"),
    "modes swapped": B_HEAD + B_BODY.replace('"gnmt"', '"tmp"').replace('"average"', '"gnmt"').replace(
        '"tmp"', '"average"'),
    "multiplies by the penalty": B_HEAD + B_BODY.replace("sum_logprobs / penalty", "sum_logprobs * penalty"),
    "gnmt over 5": B_HEAD + B_BODY.replace("/ 6.0)", "/ 5.0)"),
    "none mode averages": B_HEAD + B_BODY.replace("np.ones_like(sum_logprobs)", "lengths.astype(float)"),
}
BEAM_RIGHT = {
    "loop": B_HEAD + '''        out = []
        for lp, n in zip(sum_logprobs, lengths):
            if n < self.min_length:
                out.append(-np.inf)
                continue
            if self.mode == "gnmt":
                out.append(lp / ((5 + n) / 6) ** self.length_penalty)
            elif self.mode == "average":
                out.append(lp / float(n) ** self.length_penalty)
            else:
                out.append(lp)
        return np.array(out, dtype=float)
''',
    "dispatch table": B_HEAD + '''        base = {"gnmt": (5.0 + lengths) / 6.0, "average": lengths.astype(float)}
        penalty = np.power(base.get(self.mode, np.ones(len(lengths))), self.length_penalty)
        scores = sum_logprobs * penalty ** -1.0
        scores[lengths < self.min_length] = -np.inf
        return scores
''',
    "log-space penalty": B_HEAD + '''        if self.mode == "gnmt":
            log_pen = self.length_penalty * np.log((5.0 + lengths) / 6.0)
        elif self.mode == "average":
            log_pen = self.length_penalty * np.log(lengths)
        else:
            log_pen = np.zeros(lengths.shape)
        scores = sum_logprobs / np.exp(log_pen)
        return np.where(lengths >= self.min_length, scores, -np.inf)
''',
}

GAE_GOLDEN = '''

def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """Generalized advantage estimation (Schulman et al. 2016) over a rollout of ``steps`` steps of ``envs``
    environments: rewards, values, dones (steps, envs), dones[t] = 1.0 where the episode ended at step t (so
    step t bootstraps from nothing and the trace stops there); last_value (envs,) is the value of the state
    after the last step. Returns (advantages, returns), returns = advantages + values."""
    steps = rewards.shape[0]
    advantages = np.zeros(rewards.shape)
    running = np.zeros(rewards.shape[1:])
    for t in range(steps - 1, -1, -1):
        next_value = last_value if t == steps - 1 else values[t + 1]
        live = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * live - values[t]
        running = delta + gamma * lam * live * running
        advantages[t] = running
    return advantages, advantages + values
'''
GAE_DRIVER = '''"""Collect rollouts of a toy random-walk environment and compute their advantages: python train.py"""

import numpy as np

from rl.advantages import compute_gae


def main():
    rng = np.random.default_rng(0)
    envs, horizon = 4, 16
    for update in range(3):
        rewards = rng.normal(size=(horizon, envs))
        values = rng.normal(size=(horizon, envs))
        dones = (rng.random((horizon, envs)) < 0.1).astype(np.float64)
        last_value = rng.normal(size=envs)
        advantages, returns = compute_gae(rewards, values, dones, last_value)
        print(f"update {update}: mean advantage {advantages.mean():.4f}, mean return {returns.mean():.4f}")


if __name__ == "__main__":
    main()
'''
G_SIG = "def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):\n"
G_BODY = '''    steps = rewards.shape[0]
    advantages = np.zeros(rewards.shape)
    running = np.zeros(rewards.shape[1:])
    for t in range(steps - 1, -1, -1):
        next_value = last_value if t == steps - 1 else values[t + 1]
        live = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * live - values[t]
        running = delta + gamma * lam * live * running
        advantages[t] = running
    return advantages, advantages + values
'''


def _gae(old: str, new: str, body: str = G_BODY) -> str:
    assert old in body, old
    return G_SIG + body.replace(old, new)


GAE_WRONG = {
    "ignores lam": _gae("gamma * lam * live * running", "gamma * live * running"),
    "pins gamma": G_SIG + "    gamma = 0.99\n" + G_BODY,
    "pins lam": G_SIG + "    lam = 0.95\n" + G_BODY,
    "trace runs through episode ends": _gae("gamma * lam * live * running", "gamma * lam * running"),
    "bootstraps through episode ends": _gae("gamma * next_value * live", "gamma * next_value"),
    "done flag of the next step": _gae("live = 1.0 - dones[t]",
                                       "live = 1.0 - (dones[t + 1] if t + 1 < steps else 0.0)"),
    "last value ignored": _gae("last_value if t == steps - 1", "0.0 if t == steps - 1"),
    "forward in time": _gae("range(steps - 1, -1, -1)", "range(steps)"),
    "returns as advantages minus values": _gae("advantages + values", "advantages - values"),
    "returns as discounted rewards": _gae("    return advantages, advantages + values\n", '''\
    returns = np.zeros(rewards.shape)
    acc = last_value * 1.0
    for t in range(steps - 1, -1, -1):
        acc = rewards[t] + gamma * (1.0 - dones[t]) * acc
        returns[t] = acc
    return advantages, returns
'''),
    "normalised advantages": _gae("    return advantages, advantages + values\n", '''    returns = advantages + values
    return (advantages - advantages.mean()) / (advantages.std() + 1e-8), returns
'''),
    "trace decays by lam alone": _gae("gamma * lam * live * running", "lam * live * running"),
}
GAE_RIGHT = {
    "next values shifted": G_SIG + '''\
    next_values = np.concatenate([values[1:], np.asarray(last_value)[None]], axis=0)
    live = 1.0 - dones
    deltas = rewards + gamma * next_values * live - values
    out = []
    acc = 0.0
    for t in reversed(range(len(rewards))):
        acc = deltas[t] + gamma * lam * live[t] * acc
        out.append(acc)
    advantages = np.stack(out[::-1])
    return advantages, advantages + values
''',
    "environment by environment": G_SIG + '''    steps, envs = rewards.shape
    advantages = np.zeros((steps, envs))
    for e in range(envs):
        acc = 0.0
        for t in reversed(range(steps)):
            nxt = float(last_value[e]) if t == steps - 1 else float(values[t + 1, e])
            if dones[t, e]:
                acc = rewards[t, e] - values[t, e]
            else:
                acc = rewards[t, e] + gamma * nxt - values[t, e] + gamma * lam * acc
            advantages[t, e] = acc
    returns = values + advantages
    return advantages, returns
''',
    "discount helper": G_SIG + '''\
    deltas = _deltas(rewards, values, dones, last_value, gamma)
    factors = gamma * lam * (1.0 - dones)
    advantages = _discounted(deltas, factors)
    return advantages, advantages + values


def _deltas(rewards, values, dones, last_value, gamma):
    nxt = np.vstack([values[1:], last_value[None, :]])
    return rewards + gamma * (1 - dones) * nxt - values


def _discounted(x, factors):
    out = np.empty_like(x, dtype=float)
    acc = np.zeros(x.shape[1:])
    for t in range(x.shape[0] - 1, -1, -1):
        acc = x[t] + factors[t] * acc
        out[t] = acc
    return out
''',
}


def gae_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``compute_gae`` on general inputs: several shapes, done rates and both hyperparameters."""
    rng = np.random.default_rng(46)
    calls = []
    for steps, envs, rate, kw in ((7, 3, 0.3, {}), (5, 2, 0.0, {"gamma": 0.9, "lam": 0.8}),
                                  (6, 4, 0.5, {"gamma": 0.97, "lam": 0.5}), (1, 3, 0.3, {"lam": 0.7})):
        args = (rng.normal(size=(steps, envs)), rng.normal(size=(steps, envs)),
                (rng.random((steps, envs)) < rate).astype(float), rng.normal(size=envs))
        calls.append(lambda a=args, k=kw: ns["compute_gae"](*(x.copy() for x in a), **k))
    return calls


SUPCON_GOLDEN = '''

def supcon_loss(features, labels=None, mask=None, temperature=0.07, base_temperature=0.07):
    """Supervised contrastive loss (Khosla et al. 2020) of ``features`` (batch, views, dim), rows L2-normalised.

    Positives of an anchor are the other views of samples of its class: ``labels`` (batch,) give the classes,
    or ``mask`` (batch, batch) gives them directly (mask[i, j] = 1: sample j is a positive of sample i); with
    neither, each sample is its own class (SimCLR). Giving both is an error. Every view is an anchor; an
    anchor's loss is minus the mean log-probability of its positives among all other views, scaled by
    ``temperature / base_temperature``; an anchor with no positive counts 0. Returns the mean over anchors.
    """
    if labels is not None and mask is not None:
        raise ValueError("give labels or mask, not both")
    batch, views = features.shape[0], features.shape[1]
    if mask is None:
        if labels is None:
            mask = np.eye(batch)
        else:
            labels = np.asarray(labels).reshape(-1, 1)
            mask = (labels == labels.T).astype(np.float64)
    else:
        mask = np.asarray(mask, dtype=np.float64)
    anchors = np.concatenate([features[:, v] for v in range(views)], axis=0)
    logits = anchors @ anchors.T / temperature
    logits = logits - logits.max(axis=1, keepdims=True)
    others = 1.0 - np.eye(batch * views)
    positives = np.tile(mask, (views, views)) * others
    log_prob = logits - np.log((np.exp(logits) * others).sum(axis=1, keepdims=True))
    count = positives.sum(axis=1)
    mean_log_prob = (positives * log_prob).sum(axis=1) / np.maximum(count, 1.0)
    loss = -(temperature / base_temperature) * mean_log_prob
    return loss.mean()
'''
SUPCON_DRIVER = '''"""One epoch of supervised contrastive pre-training on toy two-view batches: python pretrain.py"""

import numpy as np

from contrast.losses import supcon_loss


def normalised(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def main():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(4, 16))
    for step in range(3):
        labels = rng.integers(0, 4, size=8)
        base = centres[labels]
        views = np.stack([base + 0.5 * rng.normal(size=base.shape) for _ in range(2)], axis=1)
        loss = supcon_loss(normalised(views), labels)
        print(f"step {step}: loss {loss:.4f}")


if __name__ == "__main__":
    main()
'''
S_SIG = "def supcon_loss(features, labels=None, mask=None, temperature=0.07, base_temperature=0.07):\n"
S_MASK = '''    if labels is not None and mask is not None:
        raise ValueError("give labels or mask, not both")
    batch, views = features.shape[0], features.shape[1]
    if mask is None:
        if labels is None:
            mask = np.eye(batch)
        else:
            labels = np.asarray(labels).reshape(-1, 1)
            mask = (labels == labels.T).astype(np.float64)
    else:
        mask = np.asarray(mask, dtype=np.float64)
'''
S_LOSS = '''    anchors = np.concatenate([features[:, v] for v in range(views)], axis=0)
    logits = anchors @ anchors.T / temperature
    logits = logits - logits.max(axis=1, keepdims=True)
    others = 1.0 - np.eye(batch * views)
    positives = np.tile(mask, (views, views)) * others
    log_prob = logits - np.log((np.exp(logits) * others).sum(axis=1, keepdims=True))
    count = positives.sum(axis=1)
    mean_log_prob = (positives * log_prob).sum(axis=1) / np.maximum(count, 1.0)
    loss = -(temperature / base_temperature) * mean_log_prob
    return loss.mean()
'''
S_BODY = S_MASK + S_LOSS


_sc = editor(S_SIG, S_BODY)


SUPCON_WRONG = {
    "labels=None as one class": _sc("mask = np.eye(batch)", "mask = np.ones((batch, batch))"),
    "ignores the mask argument": _sc("        mask = np.asarray(mask, dtype=np.float64)\n",
                                     "        mask = np.eye(batch)\n"),
    "zero-positives guard dropped": _sc("/ np.maximum(count, 1.0)", "/ count"),
    "self-pairs as positives": _sc("positives = np.tile(mask, (views, views)) * others",
                                   "positives = np.tile(mask, (views, views))"),
    "self-pair in the denominator": _sc("(np.exp(logits) * others).sum", "np.exp(logits).sum"),
    "ignores base_temperature": _sc("-(temperature / base_temperature) * mean_log_prob", "-mean_log_prob"),
    "pins temperature": S_SIG + "    temperature = 0.07\n" + S_BODY,
    "positives only within a view": _sc("np.tile(mask, (views, views))", "np.kron(np.eye(views), mask)"),
    "sum over positives": _sc("/ np.maximum(count, 1.0)", ""),
    "mean over every other view": _sc("/ np.maximum(count, 1.0)", "/ (batch * views - 1)"),
    "first view as the only anchors": _sc("return loss.mean()", "return loss[:batch].mean()"),
    "mean over anchors with positives": _sc("return loss.mean()", "return loss[count > 0].mean()"),
}
SUPCON_RIGHT = {
    "labels=None as distinct labels": S_SIG + '''    if labels is not None and mask is not None:
        raise ValueError("labels and mask are exclusive")
    batch, views, _ = features.shape
    if mask is None:
        ids = np.arange(batch) if labels is None else np.asarray(labels).ravel()
        mask = (ids[:, None] == ids[None, :]).astype(float)
    mask = np.asarray(mask, dtype=float)
''' + S_LOSS,
    "anchor by anchor": S_SIG + S_MASK + '''    flat = features.transpose(1, 0, 2).reshape(batch * views, -1)
    owner = np.tile(np.arange(batch), views)
    total = 0.0
    for i in range(batch * views):
        sims = flat @ flat[i] / temperature
        others = [j for j in range(batch * views) if j != i]
        log_denom = np.logaddexp.reduce(sims[others])
        pos = [j for j in others if mask[owner[i], owner[j]] > 0]
        if pos:
            total += -np.mean([sims[j] - log_denom for j in pos]) * temperature / base_temperature
    return total / (batch * views)
''',
    "masked logsumexp": S_SIG + S_MASK + '''    z = np.concatenate(np.split(features, views, axis=1), axis=0)[:, 0]
    n = len(z)
    sim = z @ z.T / temperature
    np.fill_diagonal(sim, -np.inf)
    log_prob = sim - np.logaddexp.reduce(sim, axis=1, keepdims=True)
    pos = np.tile(mask, (views, views))
    np.fill_diagonal(pos, 0.0)
    log_prob = np.where(pos > 0, log_prob, 0.0)
    per_anchor = log_prob.sum(1) / np.clip(pos.sum(1), 1, None)
    return float(-(temperature / base_temperature) * per_anchor.sum() / n)
''',
}


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def supcon_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``supcon_loss`` on general inputs: labels, a mask, neither, one view, other temperatures."""
    rng = np.random.default_rng(46)
    f = ns["supcon_loss"]
    feats = [_unit(rng.normal(size=(6, 2, 5))), _unit(rng.normal(size=(5, 1, 4))), _unit(rng.normal(size=(4, 3, 5)))]
    labels = [rng.integers(0, 3, size=6), np.array([0, 0, 1, 2, 3]), np.array([1, 1, 0, 0])]
    user_mask = (rng.random((6, 6)) < 0.4).astype(float)
    return [lambda: f(feats[0], labels[0]), lambda: f(feats[0]), lambda: f(feats[0], mask=user_mask),
            lambda: f(feats[1], labels[1]), lambda: f(feats[2], labels[2], temperature=0.5),
            lambda: f(feats[2], temperature=0.2, base_temperature=0.1), lambda: f(feats[1])]


FOCAL_GOLDEN = '''

class DetectionCriterion:
    """The losses of a one-stage detector, configured by ``cfg`` (see config.py)."""

    def __init__(self, cfg):
        self.cfg = cfg

    def focal_loss(self, logits, targets):
        """Sigmoid focal loss (Lin et al. 2017) of class ``logits`` (anchors, classes) against 0/1 ``targets``
        of the same shape: binary cross-entropy times ``(1 - p_t) ** cfg.loss.gamma``, weighted by
        ``cfg.loss.alpha`` on positives and ``1 - alpha`` on negatives (a negative alpha turns the weighting
        off), summed and divided by the number of foreground anchors (those with a positive class), at least 1.
        """
        gamma = self.cfg.loss.gamma
        alpha = self.cfg.loss.alpha
        prob = 1.0 / (1.0 + np.exp(-logits))
        ce = np.logaddexp(0.0, logits) - targets * logits
        p_t = prob * targets + (1.0 - prob) * (1.0 - targets)
        loss = ce * (1.0 - p_t) ** gamma
        if alpha >= 0:
            loss = (alpha * targets + (1.0 - alpha) * (1.0 - targets)) * loss
        num_fg = float((targets.max(axis=1) > 0).sum())
        return loss.sum() / max(num_fg, 1.0)
'''
FOCAL_CONFIG = '''"""Training configuration."""

from dataclasses import dataclass, field


@dataclass
class LossConfig:
    gamma: float = 2.0
    alpha: float = 0.25


@dataclass
class Config:
    num_classes: int = 5
    loss: LossConfig = field(default_factory=LossConfig)
'''
FOCAL_DRIVER = '''"""Score random detector outputs against sparse anchor assignments: python train.py"""

import numpy as np

from detector.config import Config
from detector.criterion import DetectionCriterion


def main():
    rng = np.random.default_rng(0)
    cfg = Config()
    criterion = DetectionCriterion(cfg)
    for step in range(3):
        logits = rng.normal(scale=2.0, size=(20, cfg.num_classes))
        targets = np.zeros((20, cfg.num_classes))
        fg = rng.choice(20, size=4, replace=False)
        targets[fg, rng.integers(0, cfg.num_classes, size=4)] = 1.0
        print(f"step {step}: focal loss {criterion.focal_loss(logits, targets):.4f}")


if __name__ == "__main__":
    main()
'''
FO_HEAD = '''class DetectionCriterion:
    def __init__(self, cfg):
        self.cfg = cfg

    def focal_loss(self, logits, targets):
'''
FO_BODY = '''        gamma = self.cfg.loss.gamma
        alpha = self.cfg.loss.alpha
        prob = 1.0 / (1.0 + np.exp(-logits))
        ce = np.logaddexp(0.0, logits) - targets * logits
        p_t = prob * targets + (1.0 - prob) * (1.0 - targets)
        loss = ce * (1.0 - p_t) ** gamma
        if alpha >= 0:
            loss = (alpha * targets + (1.0 - alpha) * (1.0 - targets)) * loss
        num_fg = float((targets.max(axis=1) > 0).sum())
        return loss.sum() / max(num_fg, 1.0)
'''


_fo = editor(FO_HEAD, FO_BODY)


FOCAL_WRONG = {
    "pins gamma": _fo("gamma = self.cfg.loss.gamma", "gamma = 2.0"),
    "pins alpha": _fo("alpha = self.cfg.loss.alpha", "alpha = 0.25"),
    "alpha weighting always on": _fo("        if alpha >= 0:\n            loss = (alpha", "        loss = (alpha"),
    "alpha on the negatives": _fo("alpha * targets + (1.0 - alpha) * (1.0 - targets)",
                                  "alpha * (1.0 - targets) + (1.0 - alpha) * targets"),
    "foreground clamp dropped": _fo("max(num_fg, 1.0)", "num_fg"),
    "divided by the anchors": _fo("max(num_fg, 1.0)", "logits.shape[0]"),
    "mean over entries": _fo("loss.sum() / max(num_fg, 1.0)", "loss.mean()"),
    "modulated by 1 - p": _fo("(1.0 - p_t) ** gamma", "(1.0 - prob) ** gamma"),
    "weighting off only below zero exclusive": _fo("if alpha >= 0:", "if alpha > 0:"),
    "foreground counted per positive entry": _fo("float((targets.max(axis=1) > 0).sum())", "float(targets.sum())"),
    "foreground from the predictions": _fo("float((targets.max(axis=1) > 0).sum())",
                                           "float((logits.max(axis=1) > 0).sum())"),
    "modulated by p_t": _fo("(1.0 - p_t) ** gamma", "p_t ** gamma"),
}
FOCAL_RIGHT = {
    "float config and a sigmoid helper": FO_HEAD + '''        loss_cfg = self.cfg.loss
        gamma, alpha = float(loss_cfg.gamma), float(loss_cfg.alpha)
        p = _sigmoid(logits)
        ce = -(targets * np.log(p) + (1 - targets) * np.log1p(-p))
        weight = np.where(targets > 0, 1 - p, p) ** gamma
        if alpha >= 0:
            weight = weight * np.where(targets > 0, alpha, 1 - alpha)
        normaliser = np.clip(np.any(targets > 0, axis=1).sum(), 1, None)
        return (weight * ce).sum() / normaliser


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))
''',
    "anchor by anchor": FO_HEAD + '''        total, fg = 0.0, 0
        for row_logits, row_targets in zip(logits, targets):
            fg += bool(row_targets.any())
            for x, t in zip(row_logits, row_targets):
                p = 1.0 / (1.0 + np.exp(-x))
                pt = p if t == 1 else 1.0 - p
                term = -np.log(pt) * (1.0 - pt) ** self.cfg.loss.gamma
                if self.cfg.loss.alpha >= 0:
                    term *= self.cfg.loss.alpha if t == 1 else 1.0 - self.cfg.loss.alpha
                total += term
        return total / max(fg, 1)
''',
    "log-sigmoid form": FO_HEAD + '''        cfg = self.cfg.loss
        log_p, log_not_p = -np.logaddexp(0.0, -logits), -np.logaddexp(0.0, logits)
        ce = -(targets * log_p + (1.0 - targets) * log_not_p)
        p_t = np.exp(-ce)
        loss = ce * np.power(1.0 - p_t, cfg.gamma)
        if not cfg.alpha < 0:
            loss *= np.where(targets == 1, cfg.alpha, 1.0 - cfg.alpha)
        return loss.sum() / max(int(np.count_nonzero(targets.sum(axis=1))), 1)
''',
}


def focal_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``focal_loss`` on general inputs: several gamma and alpha (0 and negative included), multi-label
    anchors, a batch with no foreground."""
    rng = np.random.default_rng(46)
    calls = []
    for gamma, alpha, fg_rate in ((2.0, 0.25, 0.15), (0.5, 0.6, 0.3), (1.5, -1.0, 0.2), (2.0, 0.0, 0.2),
                                  (3.0, 0.4, 0.0), (0.0, 0.25, 0.4)):
        cfg = SimpleNamespace(loss=SimpleNamespace(gamma=gamma, alpha=alpha))
        logits = rng.normal(scale=2.0, size=(9, 4))
        targets = (rng.random((9, 4)) < fg_rate).astype(float)
        calls.append(lambda c=cfg, x=logits, t=targets: ns["DetectionCriterion"](c).focal_loss(x, t))
    return calls


COSINE_GOLDEN = '''

def lr_at(step, base_lr=3e-4, warmup_steps=20, total_steps=200, min_lr=1e-5):
    """Learning rate at optimiser ``step`` (0-based): a linear warmup to ``base_lr`` over the first
    ``warmup_steps`` steps (step s gets base_lr * (s + 1) / warmup_steps), then a half cosine from ``base_lr``
    down to ``min_lr`` over the remaining steps up to ``total_steps``, progress counted from the end of the
    warmup; ``min_lr`` from then on."""
    if step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    progress = min(progress, 1.0)
    return min_lr + 0.5 * (base_lr - min_lr) * (1.0 + math.cos(math.pi * progress))
'''
COSINE_DRIVER = '''"""Fit a linear model by SGD with a warmup-cosine schedule: python train.py"""

import numpy as np

from sched.lr import lr_at


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=64)
    w = np.zeros(3)
    for step in range(200):
        lr = lr_at(step)
        grad = 2 * x.T @ (x @ w - y) / len(y)
        w -= 1000 * lr * grad
        if step % 50 == 0:
            print(f"step {step}: lr {lr:.2e} loss {np.mean((x @ w - y) ** 2):.4f}")


if __name__ == "__main__":
    main()
'''
C_SIG = "def lr_at(step, base_lr=3e-4, warmup_steps=20, total_steps=200, min_lr=1e-5):\n"
C_BODY = '''    if step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    progress = min(progress, 1.0)
    return min_lr + 0.5 * (base_lr - min_lr) * (1.0 + math.cos(math.pi * progress))
'''


_cos = editor(C_SIG, C_BODY)


COSINE_WRONG = {
    "warmup from zero": _cos("base_lr * (step + 1) / warmup_steps", "base_lr * step / warmup_steps"),
    "progress counted from step 0": _cos("(step - warmup_steps) / max(1, total_steps - warmup_steps)",
                                         "step / max(1, total_steps)"),
    "warmup boundary inclusive": _cos("if step < warmup_steps:", "if step <= warmup_steps:"),
    "ignores min_lr": _cos("min_lr + 0.5 * (base_lr - min_lr)", "0.5 * base_lr"),
    "min_lr added on top": _cos("min_lr + 0.5 * (base_lr - min_lr)", "min_lr + 0.5 * base_lr"),
    "no clamp after the last step": _cos("    progress = min(progress, 1.0)\n", ""),
    "pins warmup_steps": C_SIG + "    warmup_steps = 20\n" + C_BODY,
    "pins total_steps": C_SIG + "    total_steps = 200\n" + C_BODY,
    "decay over all steps": _cos("/ max(1, total_steps - warmup_steps)", "/ max(1, total_steps)"),
    "quarter cosine": _cos("0.5 * (base_lr - min_lr) * (1.0 + math.cos(math.pi * progress))",
                           "(base_lr - min_lr) * math.cos(0.5 * math.pi * progress)"),
    "zero-length decay guard dropped": _cos("/ max(1, total_steps - warmup_steps)", "/ (total_steps - warmup_steps)"),
    "linear decay": _cos("0.5 * (base_lr - min_lr) * (1.0 + math.cos(math.pi * progress))",
                         "(base_lr - min_lr) * (1.0 - progress)"),
}
COSINE_RIGHT = {
    "numpy with clip": C_SIG + '''    if step < warmup_steps:
        return float(base_lr * (step + 1) / warmup_steps)
    span = max(total_steps - warmup_steps, 1)
    t = np.clip((step - warmup_steps) / span, 0.0, 1.0)
    return float(min_lr + (base_lr - min_lr) * (1 + np.cos(np.pi * t)) / 2)
''',
    "cosine helper": C_SIG + '''    if step >= warmup_steps:
        return _cosine_between(base_lr, min_lr, (step - warmup_steps) / max(1, total_steps - warmup_steps))
    return (step + 1) * (base_lr / warmup_steps)


def _cosine_between(high, low, fraction):
    fraction = 1.0 if fraction > 1.0 else fraction
    return low + (high - low) * 0.5 * (1.0 + math.cos(fraction * math.pi))
''',
    "warmup by interpolation": C_SIG + '''    if step < warmup_steps:
        return float(np.interp(step + 1, [0, warmup_steps], [0.0, base_lr]))
    done = step - warmup_steps
    length = max(1, total_steps - warmup_steps)
    if done >= length:
        return min_lr
    return min_lr + (base_lr - min_lr) * math.cos(math.pi * done / length / 2) ** 2
''',
}


def cosine_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``lr_at`` over whole runs of several schedules (warmup 0, a decay of length 0, past the end)."""
    calls = []
    for kw in ({}, {"warmup_steps": 5, "total_steps": 30, "base_lr": 0.1, "min_lr": 0.01},
               {"warmup_steps": 0, "total_steps": 10, "base_lr": 1.0, "min_lr": 0.0},
               {"warmup_steps": 8, "total_steps": 8, "base_lr": 0.5}):
        total = int(kw.get("total_steps", 200))
        calls.append(lambda k=kw, n=total: [ns["lr_at"](s, **k) for s in range(n + 5)])
    return calls


PPO_GOLDEN = '''

class PPOTrainer:
    """Proximal policy optimisation of a language model against a reward model, with a KL penalty to a frozen
    reference model whose coefficient ``kl_ctl.value`` the trainer adapts."""

    def __init__(self, config, kl_ctl):
        self.config = config
        self.kl_ctl = kl_ctl

    def _kl_penalty(self, logprob, ref_logprob):
        """The per-token penalty of ``config.kl_penalty``: "kl" (the log-ratio), "abs" (its absolute value) or
        "mse" (half its square)."""
        diff = logprob - ref_logprob
        if self.config.kl_penalty == "kl":
            return diff
        if self.config.kl_penalty == "abs":
            return np.abs(diff)
        if self.config.kl_penalty == "mse":
            return 0.5 * diff * diff
        raise ValueError(f"unknown kl_penalty {self.config.kl_penalty!r}")

    def compute_rewards(self, scores, logprobs, ref_logprobs, masks):
        """Per-token rewards of a batch of responses: minus ``kl_ctl.value`` times the KL penalty at every
        response token (0 where ``masks`` is 0), plus the sequence's reward-model ``score`` at its last response
        token (the last 1 of its mask). scores (batch,); logprobs, ref_logprobs, masks (batch, tokens).
        Returns (rewards, non_score_rewards, kls), each (batch, tokens)."""
        kls = self._kl_penalty(logprobs, ref_logprobs) * masks
        non_score = -self.kl_ctl.value * kls
        rewards = non_score.copy()
        last = masks.shape[1] - 1 - np.argmax(masks[:, ::-1] > 0, axis=1)
        rewards[np.arange(len(scores)), last] += scores
        return rewards, non_score, kls
'''
PPO_KL = '''"""KL coefficient controllers."""

from dataclasses import dataclass

import numpy as np


@dataclass
class AdaptiveKLController:
    """Adapts the KL coefficient ``value`` towards a target KL (Ziegler et al. 2019)."""

    value: float
    target: float
    horizon: int

    def update(self, current, n_steps):
        error = np.clip(current / self.target - 1.0, -0.2, 0.2)
        self.value = self.value * (1.0 + error * n_steps / self.horizon)
'''
PPO_CONFIG = '''"""PPO settings."""

from dataclasses import dataclass


@dataclass
class PPOConfig:
    kl_penalty: str = "kl"
    init_kl_coef: float = 0.2
    target_kl: float = 6.0
    horizon: int = 10000
    batch_size: int = 4
'''
PPO_DRIVER = '''"""A few PPO rollouts of a toy policy against a toy reward model: python train.py"""

import numpy as np

from rlhf.config import PPOConfig
from rlhf.kl import AdaptiveKLController
from rlhf.ppo import PPOTrainer


def main():
    rng = np.random.default_rng(0)
    config = PPOConfig()
    trainer = PPOTrainer(config, AdaptiveKLController(config.init_kl_coef, config.target_kl, config.horizon))
    for step in range(3):
        tokens = 7
        lengths = rng.integers(3, tokens + 1, size=config.batch_size)
        masks = (np.arange(tokens)[None, :] < lengths[:, None]).astype(np.float32)
        logprobs = rng.normal(-2.0, 0.5, size=(config.batch_size, tokens)).astype(np.float32)
        ref_logprobs = (logprobs + rng.normal(0.0, 0.2, size=logprobs.shape)).astype(np.float32)
        scores = rng.normal(size=config.batch_size).astype(np.float32)
        rewards, non_score, kls = trainer.compute_rewards(scores, logprobs, ref_logprobs, masks)
        kl = float((kls.sum(axis=1)).mean())
        trainer.kl_ctl.update(kl, config.batch_size)
        print(f"step {step}: mean reward {rewards.sum(axis=1).mean():.4f}, kl {kl:.4f}")


if __name__ == "__main__":
    main()
'''
P_HEAD = '''class PPOTrainer:
    def __init__(self, config, kl_ctl):
        self.config = config
        self.kl_ctl = kl_ctl

    def _kl_penalty(self, logprob, ref_logprob):
        diff = logprob - ref_logprob
        if self.config.kl_penalty == "kl":
            return diff
        if self.config.kl_penalty == "abs":
            return np.abs(diff)
        if self.config.kl_penalty == "mse":
            return 0.5 * diff * diff
        raise ValueError(f"unknown kl_penalty {self.config.kl_penalty!r}")

    def compute_rewards(self, scores, logprobs, ref_logprobs, masks):
'''
P_BODY = '''        kls = self._kl_penalty(logprobs, ref_logprobs) * masks
        non_score = -self.kl_ctl.value * kls
        rewards = non_score.copy()
        last = masks.shape[1] - 1 - np.argmax(masks[:, ::-1] > 0, axis=1)
        rewards[np.arange(len(scores)), last] += scores
        return rewards, non_score, kls
'''


_ppo = editor(P_HEAD, P_BODY)


PPO_WRONG = {
    "ignores kl_penalty": _ppo("self._kl_penalty(logprobs, ref_logprobs)", "(logprobs - ref_logprobs)"),
    "mse without the half": _ppo("self._kl_penalty(logprobs, ref_logprobs)", '''(
            (logprobs - ref_logprobs) ** 2 if self.config.kl_penalty == "mse"
            else self._kl_penalty(logprobs, ref_logprobs))'''),
    "pins the kl coefficient": _ppo("-self.kl_ctl.value * kls", "-0.2 * kls"),
    "score on the row's last token": _ppo("rewards[np.arange(len(scores)), last] += scores",
                                          "rewards[:, -1] += scores"),
    "last token as the mask count": _ppo("last = masks.shape[1] - 1 - np.argmax(masks[:, ::-1] > 0, axis=1)",
                                         "last = masks.sum(axis=1).astype(int) - 1"),
    "penalty unmasked": _ppo("self._kl_penalty(logprobs, ref_logprobs) * masks",
                             "self._kl_penalty(logprobs, ref_logprobs)"),
    "log-ratio reversed": _ppo("self._kl_penalty(logprobs, ref_logprobs)", "self._kl_penalty(ref_logprobs, logprobs)"),
    "penalty added": _ppo("-self.kl_ctl.value * kls", "self.kl_ctl.value * kls"),
    "kls returned scaled": _ppo("return rewards, non_score, kls", "return rewards, non_score, non_score"),
    "unknown mode taken as kl": _ppo("self._kl_penalty(logprobs, ref_logprobs)", '''(
            np.abs(logprobs - ref_logprobs) if self.config.kl_penalty == "abs"
            else 0.5 * (logprobs - ref_logprobs) ** 2 if self.config.kl_penalty == "mse"
            else logprobs - ref_logprobs)'''),
    "score on every token": _ppo("rewards[np.arange(len(scores)), last] += scores",
                                 "rewards += scores[:, None] * masks"),
    "score on the first response token": _ppo("last = masks.shape[1] - 1 - np.argmax(masks[:, ::-1] > 0, axis=1)",
                                              "last = np.argmax(masks > 0, axis=1)"),
}
PPO_RIGHT = {
    "float coefficient": _ppo("-self.kl_ctl.value * kls", "-float(self.kl_ctl.value) * kls"),
    "row by row": P_HEAD + '''        rewards, non_scores, kls = [], [], []
        for score, logprob, ref_logprob, mask in zip(scores, logprobs, ref_logprobs, masks):
            kl = self._kl_penalty(logprob, ref_logprob) * mask
            non_score = -self.kl_ctl.value * kl
            reward = non_score.copy()
            reward[np.nonzero(mask)[0][-1]] += score
            kls.append(kl)
            non_scores.append(non_score)
            rewards.append(reward)
        return np.stack(rewards), np.stack(non_scores), np.stack(kls)
''',
    "penalty table": P_HEAD + '''        diff = logprobs - ref_logprobs
        table = {"kl": lambda d: d, "abs": np.abs, "mse": lambda d: 0.5 * np.square(d)}
        if self.config.kl_penalty not in table:
            raise ValueError(self.config.kl_penalty)
        kls = np.where(masks > 0, table[self.config.kl_penalty](diff), 0).astype(diff.dtype)
        coef = self.kl_ctl.value
        non_score = kls * -coef
        bonus = np.zeros_like(non_score)
        for i, row in enumerate(masks):
            bonus[i, np.flatnonzero(row)[-1]] = scores[i]
        return non_score + bonus, non_score, kls
''',
}


def ppo_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``compute_rewards`` on general inputs: each mode, an unknown mode, other coefficients, left- and
    right-padded masks, float64 and float32."""
    rng = np.random.default_rng(46)
    calls = []
    for mode, coef, left, dtype in (("kl", 0.2, False, np.float64), ("abs", 0.05, True, np.float64),
                                    ("mse", 0.3, False, np.float32), ("kl", 0.1, True, np.float32),
                                    ("squared", 0.2, False, np.float64)):
        trainer = ns["PPOTrainer"](SimpleNamespace(kl_penalty=mode), SimpleNamespace(value=coef))
        lengths = rng.integers(2, 7, size=4)
        masks = (np.arange(6)[None, :] < lengths[:, None]).astype(dtype)
        if left:
            masks = masks[:, ::-1].copy()
        lp = rng.normal(-2.0, 0.5, size=(4, 6)).astype(dtype)
        ref = (lp + rng.normal(0.0, 0.3, size=lp.shape)).astype(dtype)
        scores = rng.normal(size=4).astype(dtype)
        calls.append(lambda t=trainer, a=(scores, lp, ref, masks): t.compute_rewards(*(x.copy() for x in a)))
    return calls


GAE_GAPS = {
    "ignores lam": ["lam"], "pins gamma": ["gamma"], "pins lam": ["lam"],
    "trace runs through episode ends": ["lam * live * running"],
    "bootstraps through episode ends": ["next_value * live"], "done flag of the next step": ["dones[t]"],
    "last value ignored": ["last_value"], "forward in time": ["range(steps - 1, -1, -1)"],
    "returns as advantages minus values": ["advantages + values"],
    "returns as discounted rewards": ["advantages + values"], "normalised advantages": ["return advantages"],
    "trace decays by lam alone": ["gamma * lam"],
}
SUPCON_GAPS = {
    "labels=None as one class": ["labels", "np.eye(batch)"], "ignores the mask argument": ["mask"],
    "zero-positives guard dropped": ["np.maximum(count, 1.0)"], "self-pairs as positives": ["* others"],
    "self-pair in the denominator": ["* others"], "ignores base_temperature": ["base_temperature"],
    "pins temperature": ["temperature"], "positives only within a view": ["np.tile(mask, (views, views))"],
    "sum over positives": ["np.maximum(count, 1.0)"], "mean over every other view": ["np.maximum(count, 1.0)"],
    "first view as the only anchors": ["loss.mean()"], "mean over anchors with positives": ["loss.mean()"],
}
FOCAL_GAPS = {
    "pins gamma": ["gamma"], "pins alpha": ["alpha"], "alpha weighting always on": ["alpha >= 0"],
    "alpha on the negatives": ["alpha * targets"], "foreground clamp dropped": ["max(num_fg, 1.0)"],
    "divided by the anchors": ["max(num_fg, 1.0)"], "mean over entries": ["loss.sum()"],
    "modulated by 1 - p": ["(1.0 - p_t) ** gamma"], "weighting off only below zero exclusive": ["alpha >= 0"],
    "foreground counted per positive entry": ["targets.max(axis=1)"],
    "foreground from the predictions": ["targets.max(axis=1)"], "modulated by p_t": ["(1.0 - p_t) ** gamma"],
}
COSINE_GAPS = {
    "warmup from zero": ["(step + 1)"], "progress counted from step 0": ["step - warmup_steps"],
    "warmup boundary inclusive": ["step < warmup_steps"], "ignores min_lr": ["min_lr"],
    "min_lr added on top": ["base_lr - min_lr"], "no clamp after the last step": ["min(progress, 1.0)"],
    "pins warmup_steps": ["warmup_steps"], "pins total_steps": ["total_steps"],
    "decay over all steps": ["total_steps - warmup_steps"], "quarter cosine": ["math.cos(math.pi * progress)"],
    "zero-length decay guard dropped": ["max(1, total_steps - warmup_steps)"],
    "linear decay": ["math.cos(math.pi * progress)"],
}
PPO_GAPS = {
    "ignores kl_penalty": ["kl_penalty"], "mse without the half": ["kl_penalty", "0.5 * diff * diff"],
    "pins the kl coefficient": ["kl_ctl.value"], "score on the row's last token": ["argmax(masks[:, ::-1]",
                                                                                   "[np.arange(len(scores)), last]"],
    "last token as the mask count": ["argmax(masks[:, ::-1]"], "penalty unmasked": ["* masks"],
    "log-ratio reversed": ["logprob - ref_logprob", "logprobs, ref_logprobs"],
    "penalty added": ["-self.kl_ctl.value"], "kls returned scaled": ["return rewards, non_score, kls"],
    "unknown mode taken as kl": ["kl_penalty", "raise ValueError"], "score on every token": ["+= scores"],
    "score on the first response token": ["argmax(masks[:, ::-1]"],
}

_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "1-SmoothedNLL", "files": {"seqloss/__init__.py": "", "seqloss/losses.py": '"""Sequence losses."""\n\n'
     "import numpy as np\n" + CE_GOLDEN, "evaluate.py": CE_DRIVER}, "function": "seqloss/losses.py::label_smoothed_nll",
     "command": "python evaluate.py", "head": _NP, "wrong": CE_WRONG, "right": CE_RIGHT},
    {"name": "2-FilterLogits", "files": {"sampling/__init__.py": "", "sampling/filters.py": '"""Sampling filters."""\n'
     "\nimport numpy as np\n" + FILTER_GOLDEN, "sample.py": FILTER_DRIVER},
     "function": "sampling/filters.py::filter_logits",
     "command": "python sample.py", "head": _NP, "wrong": FILTER_WRONG, "right": FILTER_RIGHT},
    {"name": "3-Rotary", "files": {"rope/__init__.py": "", "rope/embed.py": '"""Rotary embeddings."""\n\n'
     "import numpy as np\n" + ROPE_GOLDEN, "attend.py": ROPE_DRIVER}, "function": "rope/embed.py::apply_rotary",
     "command": "python attend.py", "head": _NP, "wrong": ROPE_WRONG, "right": ROPE_RIGHT},
    {"name": "4-BeamScores", "files": {"beams/__init__.py": "", "beams/scoring.py": '"""Beam search scoring."""\n\n'
     "import numpy as np\n" + BEAM_GOLDEN, "search.py": BEAM_DRIVER},
     "function": "beams/scoring.py::BeamScorer.final_scores", "command": "python search.py",
     "head": _NP, "wrong": BEAM_WRONG, "right": BEAM_RIGHT},
    {"name": "5-GAE", "files": {"rl/__init__.py": "", "rl/advantages.py": '"""Advantage estimators."""\n\n'
     "import numpy as np\n" + GAE_GOLDEN, "train.py": GAE_DRIVER}, "function": "rl/advantages.py::compute_gae",
     "command": "python train.py", "head": _NP, "wrong": GAE_WRONG, "right": GAE_RIGHT, "check": gae_check,
     "gaps": GAE_GAPS},
    {"name": "6-SupCon", "files": {"contrast/__init__.py": "", "contrast/losses.py": '"""Contrastive losses."""\n\n'
     "import numpy as np\n" + SUPCON_GOLDEN, "pretrain.py": SUPCON_DRIVER},
     "function": "contrast/losses.py::supcon_loss", "command": "python pretrain.py", "head": _NP,
     "wrong": SUPCON_WRONG, "right": SUPCON_RIGHT, "check": supcon_check, "gaps": SUPCON_GAPS},
    {"name": "7-FocalLoss", "files": {"detector/__init__.py": "", "detector/config.py": FOCAL_CONFIG,
     "detector/criterion.py": '"""Detection losses."""\n\nimport numpy as np\n' + FOCAL_GOLDEN,
     "train.py": FOCAL_DRIVER},
     "function": "detector/criterion.py::DetectionCriterion.focal_loss", "command": "python train.py", "head": _NP,
     "wrong": FOCAL_WRONG, "right": FOCAL_RIGHT, "check": focal_check, "gaps": FOCAL_GAPS},
    {"name": "8-WarmupCosine", "files": {"sched/__init__.py": "", "sched/lr.py": '"""Learning-rate schedules."""\n\n'
     "import math\n" + COSINE_GOLDEN, "train.py": COSINE_DRIVER}, "function": "sched/lr.py::lr_at",
     "command": "python train.py", "head": "import math\n\nimport numpy as np\n\n\n", "wrong": COSINE_WRONG,
     "right": COSINE_RIGHT, "check": cosine_check, "gaps": COSINE_GAPS},
    {"name": "9-PPOKLReward", "files": {"rlhf/__init__.py": "", "rlhf/config.py": PPO_CONFIG, "rlhf/kl.py": PPO_KL,
     "rlhf/ppo.py": '"""The PPO trainer."""\n\nimport numpy as np\n' + PPO_GOLDEN, "train.py": PPO_DRIVER},
     "function": "rlhf/ppo.py::PPOTrainer.compute_rewards", "command": "python train.py", "head": _NP,
     "wrong": PPO_WRONG, "right": PPO_RIGHT, "check": ppo_check, "gaps": PPO_GAPS},
]
"""The tasks, each with its repository, goal function, driver and answers; the newer ones with ``check`` (calls
of the goal on general inputs, for ``corpus_check.py``) and ``gaps`` (``{wrong answer: [what a note naming its gap
mentions]}``)."""
