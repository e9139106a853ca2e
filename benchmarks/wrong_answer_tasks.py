"""Four numpy tasks for ``wrong_answers.py``, each a small repository whose driver calls the goal function with
its default hyperparameters (the commonest shape of real drivers), with plausible wrong answers and correct
answers in other styles. Kept apart from the tests that tune the amplifier: nothing here is read by tests/.

Each task: ``files`` (the repository), ``function`` (``file::qualname``), ``command`` (the driver), ``head``
(what a candidate's goal file starts with), ``wrong`` and ``right`` (``{what: body}``, each completed by
``head`` into a whole goal file).
"""

from __future__ import annotations

from typing import Any

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

TASKS: list[dict[str, Any]] = [
    {"name": "1-SmoothedNLL", "files": {"seqloss/__init__.py": "", "seqloss/losses.py": '"""Sequence losses."""\n\n'
     "import numpy as np\n" + CE_GOLDEN, "evaluate.py": CE_DRIVER}, "function": "seqloss/losses.py::label_smoothed_nll",
     "command": "python evaluate.py", "head": "import numpy as np\n\n\n", "wrong": CE_WRONG, "right": CE_RIGHT},
    {"name": "2-FilterLogits", "files": {"sampling/__init__.py": "", "sampling/filters.py": '"""Sampling filters."""\n'
     "\nimport numpy as np\n" + FILTER_GOLDEN, "sample.py": FILTER_DRIVER},
     "function": "sampling/filters.py::filter_logits",
     "command": "python sample.py", "head": "import numpy as np\n\n\n", "wrong": FILTER_WRONG, "right": FILTER_RIGHT},
    {"name": "3-Rotary", "files": {"rope/__init__.py": "", "rope/embed.py": '"""Rotary embeddings."""\n\n'
     "import numpy as np\n" + ROPE_GOLDEN, "attend.py": ROPE_DRIVER}, "function": "rope/embed.py::apply_rotary",
     "command": "python attend.py", "head": "import numpy as np\n\n\n", "wrong": ROPE_WRONG, "right": ROPE_RIGHT},
    {"name": "4-BeamScores", "files": {"beams/__init__.py": "", "beams/scoring.py": '"""Beam search scoring."""\n\n'
     "import numpy as np\n" + BEAM_GOLDEN, "search.py": BEAM_DRIVER},
     "function": "beams/scoring.py::BeamScorer.final_scores", "command": "python search.py",
     "head": "import numpy as np\n\n\n", "wrong": BEAM_WRONG, "right": BEAM_RIGHT},
]
"""The tasks, each with its repository, goal function, driver and answers."""
