"""A twelfth held-out set for ``wrong_answers.py --set fresh11``: four numpy tasks of shapes that no other set nor
any test fixture has. The first is sparsemax (Martins and Astudillo 2016), the Euclidean projection of scores onto
the probability simplex: the scores sorted in decreasing order, their cumulative sums, the support size as the
largest k with ``1 + k z_(k) > z_(1) + ... + z_(k)``, the threshold tau from it, along any ``axis``, and an optional
mask whose kept entries alone are projected (a slice with none kept gives zeros); the driver trains a multi-label
linear classifier with the sparsemax loss, one call per batch, on 2-D logits, the last axis and no mask. The second
is Viterbi decoding of a linear-chain CRF as a module's ``decode`` reading ``self.*``: start, transition and end
scores, backpointers kept per step, padded steps that leave the scores as they were, each sequence traced back from
its own end, a ``batch_first`` layout, and checks of the input's rank and of the first step's mask; the driver
trains a tagger with the structured perceptron, one call per batch, on sentences of one length, sequence-first and
with no mask. The third computes rotary frequencies for context extension from a config whose ``rope_scaling``
dict picks the scheme: plain, linear position interpolation, dynamic NTK-aware scaling of the base from the current
length, and YaRN (Peng, Quesnelle, Fan and Shippole 2023): a ramp over the frequency pairs between the correction
dimensions of ``beta_fast`` and ``beta_slow`` rotations, floored and ceiled unless ``truncate`` is off, clamped to
the rotary dimensions, guarded for equal bounds, and an attention factor given, or from ``mscale`` and
``mscale_all_dim``, or ``0.1 ln(factor) + 1``; with ``head_dim``, ``partial_rotary_factor`` and the legacy
``type`` key; the driver sweeps context lengths with the repository's default config, YaRN with its defaults. The
fourth is PPO's clipped policy loss as an actor's method reading ``self.config.actor``: the log-ratio clamped,
asymmetric clip ranges, the dual clip (Ye et al. 2020) of negative advantages at ``clip_ratio_c``, masked means
guarded against empty masks, the clip fractions, the approximate KL, and four ways to aggregate the token losses;
the driver runs GRPO-style updates of a toy token policy with the default config (one clip ratio, the token mean),
ratios near 1 and finite-difference gradients, so the loss is called many times a step. Written before its first
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

# -- Sparsemax: the Euclidean projection onto the simplex (Martins and Astudillo 2016) -----------------------------

SM_SIG = "def sparsemax(logits, axis=-1, mask=None):\n"
SM_BODY = '''    z = np.asarray(logits, dtype=np.float64)
    if mask is not None:
        z = np.where(mask, z, -np.inf)
    n = z.shape[axis]
    z_sorted = -np.sort(-z, axis=axis)
    cumsum = np.cumsum(z_sorted, axis=axis) - 1.0
    shape = [1] * z.ndim
    shape[axis] = n
    k = np.arange(1, n + 1).reshape(shape)
    support = k * z_sorted > cumsum
    support_size = support.sum(axis=axis, keepdims=True)
    tau = np.take_along_axis(cumsum, np.maximum(support_size - 1, 0), axis=axis) / np.maximum(support_size, 1)
    with np.errstate(invalid="ignore"):
        p = np.maximum(z - tau, 0.0)
    if mask is not None:
        p = np.where(support_size > 0, p, 0.0)
    return p
'''
SM_DOC = '''    """Sparsemax: the Euclidean projection of ``logits`` onto the probability simplex along ``axis``.

    ``logits``: a float array of any rank >= 1 (or anything ``np.asarray`` takes); ``axis``: the axis of the
    scores, negative or not. Along it, with z_(1) >= z_(2) >= ... the scores sorted in decreasing order, the
    support size k(z) is the largest k with ``1 + k * z_(k) > z_(1) + ... + z_(k)`` (k = 1 always qualifies), the
    threshold is ``tau = (z_(1) + ... + z_(k(z)) - 1) / k(z)`` and the result is ``max(z - tau, 0)``: it sums to 1
    along the axis, and scores far below the top get exactly 0.

    ``mask``: None, or a boolean array of the shape of ``logits``; entries where it is False take no part: they
    get 0, and the kept entries of their slice get the sparsemax of the kept entries alone. A slice with no entry
    kept gets all zeros. Returns a float64 array of the shape of ``logits``; no argument is changed.
    """
'''
SM_GOLDEN = "\n\n" + SM_SIG + SM_DOC + SM_BODY
SM_DRIVER = '''"""Multi-label classification with the sparsemax loss (Martins and Astudillo 2016): python train.py"""

import numpy as np

from sparse.activations import sparsemax

N_FEATURES = 12
N_LABELS = 8
N_TRAIN = 400
BATCH = 100


def make_data(rng):
    """Examples with one to three labels, their features near the mean of their labels' centres."""
    centres = 2.0 * rng.normal(size=(N_LABELS, N_FEATURES))
    labels = np.zeros((N_TRAIN, N_LABELS))
    for i in range(N_TRAIN):
        labels[i, rng.choice(N_LABELS, size=int(rng.integers(1, 4)), replace=False)] = 1.0
    x = labels @ centres / labels.sum(axis=1, keepdims=True) + 0.3 * rng.normal(size=(N_TRAIN, N_FEATURES))
    return x, labels


def sparsemax_loss(z, p, q):
    """The sparsemax loss of logits z against target distributions q, given p = sparsemax(z)."""
    support = p > 0
    tau = ((z * support).sum(axis=1) - 1.0) / support.sum(axis=1)
    per_example = (-(q * z).sum(axis=1) + 0.5 * ((z ** 2 - tau[:, None] ** 2) * support).sum(axis=1)
                   + 0.5 * (q ** 2).sum(axis=1))
    return float(per_example.mean())


def main():
    rng = np.random.default_rng(0)
    x, labels = make_data(rng)
    q = labels / labels.sum(axis=1, keepdims=True)
    w = np.zeros((N_FEATURES, N_LABELS))
    b = np.zeros(N_LABELS)
    lr = 0.2
    for epoch in range(40):
        order = rng.permutation(N_TRAIN)
        for start in range(0, N_TRAIN, BATCH):
            idx = order[start:start + BATCH]
            z = x[idx] @ w + b
            grad = (sparsemax(z) - q[idx]) / len(idx)
            w -= lr * x[idx].T @ grad
            b -= lr * grad.sum(axis=0)
        if epoch % 10 == 9:
            z = x @ w + b
            p = sparsemax(z)
            exact = np.mean(np.all((p > 0) == (labels > 0), axis=1))
            print(f"epoch {epoch + 1}: sparsemax loss {sparsemax_loss(z, p, q):.4f}, "
                  f"mean support {np.mean((p > 0).sum(axis=1)):.2f}, exact label sets {exact:.3f}")


if __name__ == "__main__":
    main()
'''

_sm = editor(SM_SIG, SM_BODY)
_SM_MASK_IN = '''    if mask is not None:
        z = np.where(mask, z, -np.inf)
'''
_SM_GUARD = '''    if mask is not None:
        p = np.where(support_size > 0, p, 0.0)
'''

SM_WRONG = {
    "k laid along the last axis": _sm('''    shape = [1] * z.ndim
    shape[axis] = n
    k = np.arange(1, n + 1).reshape(shape)
''', '''    k = np.arange(1, n + 1)
'''),
    "cumulative sum along the last axis": _sm("cumsum = np.cumsum(z_sorted, axis=axis) - 1.0",
                                              "cumsum = np.cumsum(z_sorted, axis=-1) - 1.0"),
    "k shaped for a 2-D batch": _sm('''    shape = [1] * z.ndim
    shape[axis] = n
    k = np.arange(1, n + 1).reshape(shape)
''', '''    k = np.arange(1, n + 1)[None, :]
'''),
    "mask ignored": _sm(_SM_MASK_IN, "").replace(_SM_GUARD, ""),
    "masked logits zeroed, not removed": _sm("z = np.where(mask, z, -np.inf)", "z = np.where(mask, z, 0.0)"),
    "mask applied to the output only": _sm(_SM_MASK_IN, "").replace(_SM_GUARD, '''    if mask is not None:
        p = np.where(mask, p, 0.0)
'''),
    "all-masked slices not guarded": _sm(_SM_GUARD, ""),
    "mask taken as the padding": _sm("z = np.where(mask, z, -np.inf)", "z = np.where(mask, -np.inf, z)"),
}
SM_RIGHT = {
    "slice by slice with a running sum": SM_SIG + '''    z = np.moveaxis(np.array(logits, dtype=float), axis, -1)
    if mask is None:
        keep = np.ones(z.shape, dtype=bool)
    else:
        keep = np.moveaxis(np.asarray(mask, dtype=bool), axis, -1)
    out = np.zeros(z.shape)
    for idx in np.ndindex(*z.shape[:-1]):
        values = z[idx][keep[idx]]
        if values.size == 0:
            continue
        total = 0.0
        tau = 0.0
        for j, v in enumerate(sorted(values.tolist(), reverse=True), start=1):
            total += v
            if 1.0 + j * v > total:
                tau = (total - 1.0) / j
        row = out[idx]
        row[keep[idx]] = np.maximum(values - tau, 0.0)
    return np.moveaxis(out, -1, axis)
''',
    "threshold as the largest prefix value": SM_SIG + '''    z = np.moveaxis(np.asarray(logits, dtype=float), axis, -1)
    if mask is not None:
        z = np.where(np.moveaxis(np.asarray(mask, dtype=bool), axis, -1), z, -np.inf)
    ordered = np.flip(np.sort(z, axis=-1), axis=-1)
    with np.errstate(invalid="ignore"):
        candidates = (np.cumsum(ordered, axis=-1) - 1.0) / np.arange(1, z.shape[-1] + 1)
        tau = candidates.max(axis=-1, keepdims=True)
        p = np.clip(z - tau, 0.0, None)
    p = np.where(np.isneginf(tau), 0.0, p)
    return np.moveaxis(p, -1, axis)
''',
}


def sm_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general inputs: the last axis of a 2-D batch, axis 0 of a square and of an oblong array, the middle
    axis of 3-D arrays (by a positive and a negative index), a 1-D vector, a dominant score and ties, integer
    logits, and masks: slices partly kept, one kept entry, none kept, all kept, along the last axis and along axis
    0 of a 3-D array. Each gives the result and the arguments as the caller holds them afterwards."""
    rng = np.random.default_rng(131)
    cases: list[tuple[Any, dict[str, Any]]] = [
        (rng.normal(size=(6, 7)), {}),
        (2.0 * rng.normal(size=(7, 4)), {"axis": 0}),
        (rng.normal(size=(5, 5)), {"axis": 0}),
        (rng.normal(size=(3, 6, 4)), {"axis": 1}),
        (0.5 * rng.normal(size=(2, 5, 3)), {"axis": -2}),
        (0.3 * rng.normal(size=9), {}),
        (np.array([[10.0, 1.0, 0.5, -2.0], [0.2, 0.2, 0.1, 0.3], [1.0, 1.0, 1.0, 1.0]]), {}),
        (np.arange(12).reshape(3, 4) % 5, {"axis": 1}),
    ]
    z = rng.normal(size=(5, 6))
    m = rng.random((5, 6)) < 0.6
    m[1] = False
    m[2] = True
    m[3] = [False, False, True, False, False, False]
    m[4, :2] = [True, False]
    cases.append((z, {"mask": m}))
    z = rng.normal(size=(4, 3, 5))
    m = rng.random((4, 3, 5)) < 0.5
    m[:, 1, 3] = False
    m[:, 2, 0] = True
    m[0, 0, 0] = True
    cases.append((z, {"axis": 0, "mask": m}))
    cases.append((rng.normal(size=(3, 4)), {"axis": 1, "mask": np.ones((3, 4), dtype=bool)}))
    calls: list[Callable[[], object]] = []
    for z, kwargs in cases:

        def call(z=z, kwargs=kwargs) -> object:
            held = np.array(z, copy=True)
            given = {k: np.array(v, copy=True) if k == "mask" else v for k, v in kwargs.items()}
            return ns["sparsemax"](held, **given), held, given.get("mask")

        calls.append(call)
    return calls


# -- Viterbi decoding of a linear-chain CRF with start and end transitions and a padding mask ----------------------

CR_HEAD = '''class CRF:
    """A linear-chain conditional random field over ``num_tags`` tags: ``start_transitions[j]`` scores a sequence
    that starts with tag j, ``end_transitions[j]`` one that ends with it, and ``transitions[i, j]`` a step from tag
    i to tag j. Emissions are (seq_len, batch, num_tags), or (batch, seq_len, num_tags) with ``batch_first``."""

    def __init__(self, num_tags, batch_first=False, seed=0):
        rng = np.random.default_rng(seed)
        self.num_tags = num_tags
        self.batch_first = batch_first
        self.start_transitions = rng.uniform(-0.1, 0.1, size=num_tags)
        self.end_transitions = rng.uniform(-0.1, 0.1, size=num_tags)
        self.transitions = rng.uniform(-0.1, 0.1, size=(num_tags, num_tags))

    def decode(self, emissions, mask=None):
'''
CR_BODY = '''        if emissions.ndim != 3:
            raise ValueError(f"emissions must have dimension of 3, got {emissions.ndim}")
        if mask is None:
            mask = np.ones(emissions.shape[:2], dtype=bool)
        if self.batch_first:
            emissions = emissions.transpose(1, 0, 2)
            mask = mask.T
        mask = np.asarray(mask, dtype=bool)
        if not mask[0].all():
            raise ValueError("mask of the first timestep must all be on")
        seq_length, batch_size = mask.shape
        score = self.start_transitions + emissions[0]
        history = []
        for i in range(1, seq_length):
            next_score = score[:, :, None] + self.transitions + emissions[i][:, None, :]
            indices = next_score.argmax(axis=1)
            next_score = next_score.max(axis=1)
            score = np.where(mask[i][:, None], next_score, score)
            history.append(indices)
        score = score + self.end_transitions
        seq_ends = mask.sum(axis=0) - 1
        best_tags_list = []
        for idx in range(batch_size):
            best_last_tag = int(score[idx].argmax())
            best_tags = [best_last_tag]
            for hist in reversed(history[:seq_ends[idx]]):
                best_last_tag = int(hist[idx][best_tags[-1]])
                best_tags.append(best_last_tag)
            best_tags.reverse()
            best_tags_list.append(best_tags)
        return best_tags_list
'''
CR_DOC = '''        """The highest-scoring tag sequence of each sequence of the batch (Viterbi).

        ``emissions``: a float array, (seq_len, batch, num_tags), or (batch, seq_len, num_tags) when
        ``self.batch_first``; any other rank raises ValueError. ``mask``: None (every step of every sequence is
        real) or a 0/1 or boolean array of the emissions' first two dimensions, in the same layout: sequence b is
        real for its first ``lengths[b] >= 1`` steps and padded after them. The first step must be real for every
        sequence, else ValueError.

        A tag sequence y_0..y_{L-1} of a sequence of length L scores ``start_transitions[y_0] + sum_t
        emissions[t, y_t] + sum_{t >= 1} transitions[y_{t-1}, y_t] + end_transitions[y_{L-1}]``; padded steps take
        no part. Returns a list of ``batch`` lists of ints, list b holding the best tag sequence of sequence b, of
        its own length L. No argument is changed.
        """
'''
CR_GOLDEN = "\n\n" + CR_HEAD + CR_DOC + CR_BODY
CR_DRIVER = '''"""Train a linear-chain CRF tagger with the structured perceptron: python train_tagger.py"""

import numpy as np

from tagger.crf import CRF

NUM_TAGS = 5
VOCAB = 40
SEQ_LEN = 12
BATCH = 16


def make_corpus(rng, n, start, trans, emit):
    """Sentences of a hidden Markov model: tags follow a Markov chain, each word is drawn given its tag."""
    tags = np.zeros((n, SEQ_LEN), dtype=int)
    words = np.zeros((n, SEQ_LEN), dtype=int)
    for s in range(n):
        tag = rng.choice(NUM_TAGS, p=start)
        for t in range(SEQ_LEN):
            tags[s, t] = tag
            words[s, t] = rng.choice(VOCAB, p=emit[tag])
            tag = rng.choice(NUM_TAGS, p=trans[tag])
    return words, tags


def main():
    rng = np.random.default_rng(0)
    start = rng.dirichlet(np.ones(NUM_TAGS))
    trans = rng.dirichlet(np.full(NUM_TAGS, 0.3), size=NUM_TAGS)
    emit = rng.dirichlet(np.full(VOCAB, 0.2), size=NUM_TAGS)
    train_words, train_tags = make_corpus(rng, 160, start, trans, emit)
    test_words, test_tags = make_corpus(rng, 48, start, trans, emit)
    crf = CRF(NUM_TAGS)
    weights = 0.01 * rng.normal(size=(VOCAB, NUM_TAGS))
    for epoch in range(4):
        mistakes = 0
        for b in range(0, len(train_words), BATCH):
            words, gold = train_words[b:b + BATCH], train_tags[b:b + BATCH]
            predicted = crf.decode(weights[words].transpose(1, 0, 2))
            for w, g, p in zip(words, gold, predicted):
                p = np.array(p)
                if np.array_equal(g, p):
                    continue
                mistakes += int(np.sum(g != p))
                np.add.at(weights, (w, g), 1.0)
                np.add.at(weights, (w, p), -1.0)
                crf.start_transitions[g[0]] += 1.0
                crf.start_transitions[p[0]] -= 1.0
                crf.end_transitions[g[-1]] += 1.0
                crf.end_transitions[p[-1]] -= 1.0
                np.add.at(crf.transitions, (g[:-1], g[1:]), 1.0)
                np.add.at(crf.transitions, (p[:-1], p[1:]), -1.0)
        predicted = np.array(crf.decode(weights[test_words].transpose(1, 0, 2)))
        print(f"epoch {epoch}: {mistakes} training tags wrong, test tag accuracy "
              f"{np.mean(predicted == test_tags):.3f}")


if __name__ == "__main__":
    main()
'''

_cr = editor(CR_HEAD, CR_BODY)

CR_WRONG = {
    "end transitions left out": _cr("        score = score + self.end_transitions\n", ""),
    "start transitions left out": _cr("score = self.start_transitions + emissions[0]", "score = emissions[0]"),
    "transitions read from the next tag": _cr(
        "next_score = score[:, :, None] + self.transitions + emissions[i][:, None, :]",
        "next_score = score[:, :, None] + self.transitions.T + emissions[i][:, None, :]"),
    "padded steps not frozen": _cr("score = np.where(mask[i][:, None], next_score, score)", "score = next_score"),
    "traced back over the whole history": _cr("for hist in reversed(history[:seq_ends[idx]]):",
                                              "for hist in reversed(history):"),
    "sequence end one past the last step": _cr("seq_ends = mask.sum(axis=0) - 1", "seq_ends = mask.sum(axis=0)"),
    "batch_first ignored": _cr('''        if self.batch_first:
            emissions = emissions.transpose(1, 0, 2)
            mask = mask.T
''', ""),
    "first step's mask not checked": _cr('''        if not mask[0].all():
            raise ValueError("mask of the first timestep must all be on")
''', ""),
}
CR_RIGHT = {
    "sentence by sentence with explicit tables": CR_HEAD + '''        if np.ndim(emissions) != 3:
            raise ValueError("emissions must be 3-D")
        em = np.asarray(emissions, dtype=float)
        if self.batch_first:
            em = np.swapaxes(em, 0, 1)
        T, B, K = em.shape
        if mask is None:
            on = np.ones((T, B), dtype=bool)
        else:
            on = np.asarray(mask).astype(bool)
            if self.batch_first:
                on = on.T
        if not np.all(on[0]):
            raise ValueError("the first step must be on for every sequence")
        paths = []
        for b in range(B):
            length = int(on[:, b].sum())
            delta = [float(self.start_transitions[j] + em[0, b, j]) for j in range(K)]
            back = []
            for t in range(1, length):
                new, ptr = [], []
                for j in range(K):
                    cands = [delta[i] + self.transitions[i, j] for i in range(K)]
                    best = max(range(K), key=lambda i, c=cands: c[i])
                    ptr.append(best)
                    new.append(cands[best] + em[t, b, j])
                delta = new
                back.append(ptr)
            final = [delta[j] + self.end_transitions[j] for j in range(K)]
            tag = max(range(K), key=lambda j: final[j])
            path = [tag]
            for ptr in reversed(back):
                tag = ptr[tag]
                path.append(tag)
            paths.append([int(x) for x in path[::-1]])
        return paths
''',
    "every step's scores kept, each traced from its own end": CR_HEAD + '''        if emissions.ndim != 3:
            raise ValueError("expected a 3-D array of emissions")
        em = np.moveaxis(emissions, 1, 0) if self.batch_first else emissions
        T, B, _ = em.shape
        if mask is None:
            lengths = np.full(B, T)
        else:
            m = np.asarray(mask, dtype=bool)
            m = m.T if self.batch_first else m
            if not m[0].all():
                raise ValueError("first step masked")
            lengths = m.sum(axis=0)
        deltas = [self.start_transitions[None, :] + em[0]]
        pointers = []
        for t in range(1, T):
            cand = deltas[-1][:, :, None] + self.transitions[None, :, :]
            pointers.append(np.argmax(cand, axis=1))
            deltas.append(np.max(cand, axis=1) + em[t])
        out = []
        for b in range(B):
            last = int(lengths[b]) - 1
            tag = int(np.argmax(deltas[last][b] + self.end_transitions))
            path = [tag]
            for t in range(last, 0, -1):
                tag = int(pointers[t - 1][b, tag])
                path.append(tag)
            out.append(path[::-1])
        return out
''',
}


def cr_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``decode`` on general inputs: transition, start and end scores large enough to matter, batches
    without a mask and with padded sequences of lengths 1 to T, the batch-first layout with and without a mask,
    a 0/1 mask, a first step masked and emissions of the wrong rank. Each gives the result and the arguments as
    the caller holds them afterwards."""
    rng = np.random.default_rng(137)
    calls: list[Callable[[], object]] = []
    for num_tags, T, B, batch_first, lengths, kind in (
            (4, 6, 3, False, None, "bool"),
            (5, 7, 4, False, (7, 3, 1, 5), "bool"),
            (3, 5, 5, False, (2, 5, 4, 1, 3), "int"),
            (4, 6, 3, True, None, "bool"),
            (6, 8, 3, True, (8, 4, 2), "bool"),
            (3, 4, 2, False, (0, 4), "bool"),
            (3, 4, 2, True, None, "flat")):
        crf_scores = (rng.normal(size=num_tags), rng.normal(size=num_tags),
                      1.5 * rng.normal(size=(num_tags, num_tags)))
        shape = (B, T, num_tags) if batch_first else (T, B, num_tags)
        emissions = rng.normal(size=shape)
        if kind == "flat":
            emissions = emissions[0]
        mask = None
        if lengths is not None:
            mask = np.arange(T)[:, None] < np.array(lengths)[None, :]
            mask = mask.T if batch_first else mask
            mask = mask.astype(int) if kind == "int" else mask

        def call(num_tags=num_tags, batch_first=batch_first, crf_scores=crf_scores, emissions=emissions,
                 mask=mask) -> object:
            crf = ns["CRF"](num_tags, batch_first=batch_first)
            crf.start_transitions, crf.end_transitions, crf.transitions = (s.copy() for s in crf_scores)
            em = emissions.copy()
            held = None if mask is None else mask.copy()
            return crf.decode(em, held), em, held

        calls.append(call)
    return calls


# -- Rotary frequencies for context extension: linear, dynamic NTK and YaRN (Peng et al. 2023) ---------------------

YA_SIG = "def compute_rope_parameters(config, seq_len=None):\n"
YA_BODY = '''    base = config.rope_theta
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    dim = int(head_dim * getattr(config, "partial_rotary_factor", 1.0))
    scaling = config.rope_scaling or {}
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    if rope_type not in ("default", "linear", "dynamic", "yarn"):
        raise ValueError(f"unknown rope_type {rope_type!r}")
    exponents = np.arange(0, dim, 2, dtype=np.float64) / dim
    if rope_type == "default":
        return 1.0 / base ** exponents, 1.0
    factor = float(scaling["factor"])
    if rope_type == "linear":
        return 1.0 / (factor * base ** exponents), 1.0
    original = scaling.get("original_max_position_embeddings") or config.max_position_embeddings
    if rope_type == "dynamic":
        length = original if seq_len is None else max(seq_len, original)
        base = base * (factor * length / original - (factor - 1.0)) ** (dim / (dim - 2))
        return 1.0 / base ** exponents, 1.0

    def get_mscale(scale, mscale=1.0):
        if scale <= 1.0:
            return 1.0
        return 0.1 * mscale * math.log(scale) + 1.0

    def correction_dim(num_rotations):
        return dim * math.log(original / (num_rotations * 2.0 * math.pi)) / (2.0 * math.log(base))

    attention_factor = scaling.get("attention_factor")
    if attention_factor is None:
        mscale = scaling.get("mscale")
        mscale_all_dim = scaling.get("mscale_all_dim")
        if mscale and mscale_all_dim:
            attention_factor = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
        else:
            attention_factor = get_mscale(factor)
    low = correction_dim(scaling.get("beta_fast") or 32)
    high = correction_dim(scaling.get("beta_slow") or 1)
    if scaling.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2) - low) / (high - low), 0.0, 1.0)
    extrapolation = 1.0 - ramp
    pos_freqs = base ** exponents
    inv_freq = extrapolation / pos_freqs + (1.0 - extrapolation) / (factor * pos_freqs)
    return inv_freq, float(attention_factor)
'''
YA_DOC = '''    """The rotary embedding's inverse frequencies and attention factor under ``config.rope_scaling``.

    ``config`` has ``rope_theta`` (the base), ``hidden_size``, ``num_attention_heads``, ``head_dim`` (None or 0:
    ``hidden_size // num_attention_heads``), ``partial_rotary_factor`` (the rotary share of the head; dim =
    ``int(head_dim * partial_rotary_factor)``, even) and ``max_position_embeddings``, and ``rope_scaling``: None
    (as ``{}``) or a dict whose "rope_type" (or, in older configs, "type") picks the scheme, "default" when
    neither is there; any other scheme raises ValueError. The plain frequencies are ``base ** (-i / dim)`` for i =
    0, 2, ..., dim - 2 (dim / 2 of them). Returns ``(inv_freq, attention_factor)``: a float64 array of dim / 2 and
    a float.

    "default": the plain frequencies, factor 1.0. "linear" (position interpolation): the plain frequencies divided
    by ``rope_scaling["factor"]``, factor 1.0. For "dynamic" and "yarn", the original context is
    ``rope_scaling["original_max_position_embeddings"]`` when given (and not None), else
    ``max_position_embeddings``. "dynamic" (NTK-aware): the plain frequencies of the base ``base * (factor * L /
    original - (factor - 1)) ** (dim / (dim - 2))``, with L = ``max(seq_len, original)``, or the original when
    ``seq_len`` is None; factor 1.0.

    "yarn": with ``factor`` and the original context as above, the correction dimension of r rotations is ``dim *
    ln(original / (2 pi r)) / (2 ln base)``; low is that of ``beta_fast`` (default 32) and high that of
    ``beta_slow`` (default 1), a missing, None or 0 entry taking the default. Unless ``rope_scaling["truncate"]`` is
    given and false, low is floored and high ceiled; then low is raised to at least 0 and high lowered to at most
    dim - 1, and when they are equal, high grows by 0.001. The ramp of pair j (0 .. dim/2 - 1) is ``(j - low) /
    (high - low)`` clipped to [0, 1]; pair j gets ``(1 - ramp) * f_j + ramp * f_j / factor``, f_j the plain
    frequency. The attention factor is ``rope_scaling["attention_factor"]`` when given (and not None); else, with
    m(s, c) = 1 for s <= 1 and ``0.1 * c * ln(s) + 1`` otherwise, ``m(factor, mscale) / m(factor, mscale_all_dim)``
    when both "mscale" and "mscale_all_dim" are given and nonzero, and ``m(factor, 1)`` when not.
    """
'''
YA_GOLDEN = "\n\n" + YA_SIG + YA_DOC + YA_BODY
YA_CONFIG = '''"""Model configuration."""

from dataclasses import dataclass, field


def default_rope_scaling():
    """YaRN, four times the context the model was pretrained on."""
    return {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}


@dataclass
class ModelConfig:
    hidden_size: int = 1024
    num_attention_heads: int = 16
    head_dim: int | None = None
    rope_theta: float = 10000.0
    partial_rotary_factor: float = 1.0
    max_position_embeddings: int = 16384
    rope_scaling: dict | None = field(default_factory=default_rope_scaling)
'''
YA_DRIVER = '''"""How a query attends over long contexts with extended rotary embeddings: python eval_long_context.py"""

import numpy as np

from longctx.config import ModelConfig
from longctx.rope import compute_rope_parameters

SAMPLED = 512


def rotate(x, positions, inv_freq, scale):
    """Rotary embedding of rows x at the given positions, cos and sin scaled by the attention factor."""
    angles = positions[:, None] * inv_freq[None, :]
    cos, sin = np.cos(angles) * scale, np.sin(angles) * scale
    half = inv_freq.shape[0]
    x1, x2 = x[:, :half], x[:, half:2 * half]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin, x[:, 2 * half:]], axis=1)


def main():
    config = ModelConfig()
    head_dim = config.hidden_size // config.num_attention_heads
    rng = np.random.default_rng(0)
    query = rng.normal(size=(1, head_dim))
    for length in (2048, 4096, 8192, 16384):
        inv_freq, attention_factor = compute_rope_parameters(config, seq_len=length)
        positions = np.sort(rng.choice(length, size=SAMPLED, replace=False)).astype(float)
        keys = 0.5 * query + rng.normal(size=(SAMPLED, head_dim))
        q = rotate(query, np.array([length - 1.0]), inv_freq, attention_factor)
        k = rotate(keys, positions, inv_freq, attention_factor)
        logits = k @ q[0] / np.sqrt(head_dim)
        weights = np.exp(logits - logits.max())
        weights /= weights.sum()
        entropy = -np.sum(weights * np.log(weights + 1e-30))
        recent = weights[positions >= 0.9 * length].sum()
        print(f"context {length}: longest wavelength {2 * np.pi / inv_freq.min():.0f}, attention factor "
              f"{attention_factor:.4f}, entropy {entropy:.3f}, weight on the last tenth {recent:.3f}")


if __name__ == "__main__":
    main()
'''

_ya = editor(YA_SIG, YA_BODY)

YA_WRONG = {
    "attention_factor from the config ignored": _ya('''    attention_factor = scaling.get("attention_factor")
    if attention_factor is None:
''', '''    attention_factor = None
    if attention_factor is None:
'''),
    "mscale_all_dim ratio ignored": _ya('''        mscale = scaling.get("mscale")
        mscale_all_dim = scaling.get("mscale_all_dim")
        if mscale and mscale_all_dim:
            attention_factor = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
        else:
            attention_factor = get_mscale(factor)
''', '''        attention_factor = get_mscale(factor)
'''),
    "truncate flag ignored": _ya('''    if scaling.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
''', '''    low, high = math.floor(low), math.ceil(high)
'''),
    "ramp bounds not clamped": _ya("    low, high = max(low, 0), min(high, dim - 1)\n", ""),
    "head_dim from the config ignored": _ya(
        'head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads',
        "head_dim = config.hidden_size // config.num_attention_heads"),
    "partial_rotary_factor ignored": _ya('dim = int(head_dim * getattr(config, "partial_rotary_factor", 1.0))',
                                         "dim = int(head_dim)"),
    "dynamic base grown below the original length": _ya(
        "length = original if seq_len is None else max(seq_len, original)",
        "length = original if seq_len is None else seq_len"),
    "legacy type key not read": _ya('rope_type = scaling.get("rope_type", scaling.get("type", "default"))',
                                    'rope_type = scaling.get("rope_type", "default")'),
    "equal ramp bounds not guarded": _ya('''    if low == high:
        high += 0.001
''', ""),
}
YA_RIGHT = {
    "a builder per scheme, log-space powers": YA_SIG + '''    scaling = dict(config.rope_scaling or {})
    kind = scaling["rope_type"] if "rope_type" in scaling else scaling.get("type", "default")
    if kind not in _BUILDERS:
        raise ValueError(f"rope_type {kind!r} is not supported")
    head_dim = config.head_dim if getattr(config, "head_dim", None) else (
        config.hidden_size // config.num_attention_heads)
    rotary_dim = int(head_dim * getattr(config, "partial_rotary_factor", 1.0))
    return _BUILDERS[kind](config, scaling, rotary_dim, seq_len)


def _plain(base, dim):
    return np.exp(-np.arange(0, dim, 2) / dim * math.log(base))


def _original(config, scaling):
    return scaling.get("original_max_position_embeddings") or config.max_position_embeddings


def _default(config, scaling, dim, seq_len):
    return _plain(config.rope_theta, dim), 1.0


def _linear(config, scaling, dim, seq_len):
    return _plain(config.rope_theta, dim) / float(scaling["factor"]), 1.0


def _dynamic(config, scaling, dim, seq_len):
    factor = float(scaling["factor"])
    orig = _original(config, scaling)
    n = orig if seq_len is None or seq_len < orig else seq_len
    base = config.rope_theta * (factor * n / orig - factor + 1.0) ** (dim / (dim - 2))
    return _plain(base, dim), 1.0


def _m(scale, c):
    return 1.0 if scale <= 1.0 else 1.0 + 0.1 * c * math.log(scale)


def _yarn(config, scaling, dim, seq_len):
    factor = float(scaling["factor"])
    orig = _original(config, scaling)
    base = config.rope_theta

    def rotations_to_dim(r):
        return dim * math.log(orig / (2.0 * math.pi * r)) / (2.0 * math.log(base))

    lo = rotations_to_dim(scaling.get("beta_fast") or 32)
    hi = rotations_to_dim(scaling.get("beta_slow") or 1)
    if scaling.get("truncate", True):
        lo, hi = math.floor(lo), math.ceil(hi)
    lo = lo if lo > 0 else 0
    hi = hi if hi < dim - 1 else dim - 1
    if hi == lo:
        hi = hi + 0.001
    j = np.arange(dim // 2, dtype=np.float64)
    ramp = np.minimum(np.maximum((j - lo) / (hi - lo), 0.0), 1.0)
    plain = _plain(base, dim)
    inv_freq = plain * (1.0 - ramp + ramp / factor)
    if scaling.get("attention_factor") is not None:
        att = scaling["attention_factor"]
    elif scaling.get("mscale") and scaling.get("mscale_all_dim"):
        att = _m(factor, scaling["mscale"]) / _m(factor, scaling["mscale_all_dim"])
    else:
        att = _m(factor, 1.0)
    return inv_freq, float(att)


_BUILDERS = {"default": _default, "linear": _linear, "dynamic": _dynamic, "yarn": _yarn}
''',
    "pair by pair with math": YA_SIG + '''    import math as m

    rs = config.rope_scaling if config.rope_scaling is not None else {}
    kind = rs.get("rope_type", rs.get("type", "default"))
    if kind != "default" and kind != "linear" and kind != "dynamic" and kind != "yarn":
        raise ValueError("unsupported rope scaling " + repr(kind))
    hd = getattr(config, "head_dim", None)
    if not hd:
        hd = config.hidden_size // config.num_attention_heads
    d = int(hd * getattr(config, "partial_rotary_factor", 1.0))
    theta = float(config.rope_theta)
    att = 1.0
    if kind != "default":
        factor = float(rs["factor"])
    if kind == "dynamic":
        orig = rs.get("original_max_position_embeddings") or config.max_position_embeddings
        L = orig if seq_len is None else (seq_len if seq_len > orig else orig)
        theta = theta * m.pow(factor * L / orig - factor + 1.0, d / (d - 2))
    freqs = [m.pow(theta, -i / d) for i in range(0, d, 2)]
    if kind == "linear":
        freqs = [f / factor for f in freqs]
    elif kind == "yarn":
        orig = rs.get("original_max_position_embeddings") or config.max_position_embeddings
        fast = rs.get("beta_fast") or 32
        slow = rs.get("beta_slow") or 1
        low = (d * m.log(orig / (fast * 2 * m.pi))) / (2 * m.log(theta))
        high = (d * m.log(orig / (slow * 2 * m.pi))) / (2 * m.log(theta))
        if rs.get("truncate", True):
            low = m.floor(low)
            high = m.ceil(high)
        low = max(low, 0)
        high = min(high, d - 1)
        if high == low:
            high += 0.001
        out = []
        for j, f in enumerate(freqs):
            r = (j - low) / (high - low)
            r = 0.0 if r < 0.0 else (1.0 if r > 1.0 else r)
            out.append(f * (1.0 - r) + (f / factor) * r)
        freqs = out
        if rs.get("attention_factor") is not None:
            att = float(rs["attention_factor"])
        else:
            def ms(s, c=1.0):
                return 1.0 if s <= 1 else 0.1 * c * m.log(s) + 1.0

            a, b = rs.get("mscale"), rs.get("mscale_all_dim")
            att = ms(factor, a) / ms(factor, b) if (a and b) else ms(factor)
    return np.array(freqs, dtype=np.float64), float(att)
''',
}


def ya_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general configs: YaRN with the driver's settings, with an attention factor given, with
    ``mscale`` and ``mscale_all_dim`` (and ``mscale`` alone), with other betas, with ``truncate`` off, with a
    ``head_dim`` that is not hidden_size / heads and a partial rotary factor, with an original context small
    enough that the bounds are clamped (and become equal) or large enough that high passes dim - 1, taken from
    ``max_position_embeddings``; linear, dynamic below, at and past the original length and without ``seq_len``,
    the legacy ``type`` key, no scaling, and an unknown scheme. Each gives the frequencies and the factor."""
    def config(rope_scaling, hidden=1024, heads=16, head_dim=None, theta=10000.0, partial=1.0, max_pos=16384):
        return SimpleNamespace(hidden_size=hidden, num_attention_heads=heads, head_dim=head_dim, rope_theta=theta,
                               partial_rotary_factor=partial, max_position_embeddings=max_pos,
                               rope_scaling=rope_scaling)

    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
    cases: list[tuple[SimpleNamespace, Any]] = [
        (config(dict(yarn)), 8192),
        (config({**yarn, "factor": 8.0, "attention_factor": 1.3, "beta_fast": 16, "beta_slow": 2}), None),
        (config({**yarn, "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 0.5}, head_dim=128, theta=50000.0),
         None),
        (config({**yarn, "factor": 16.0, "mscale": 0.707}, hidden=768, heads=12), 100),
        (config({**yarn, "factor": 2.0, "truncate": False}, partial=0.5, theta=500000.0), None),
        (config({"rope_type": "yarn", "factor": 3.0}, max_pos=128, hidden=256, heads=8), None),
        (config({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4}, hidden=256, heads=16),
         None),
        (config({**yarn, "original_max_position_embeddings": 7360, "beta_fast": None, "beta_slow": 0.05},
                theta=100.0), None),
        (config({"rope_type": "linear", "factor": 2.0}, partial=0.25), 5000),
        (config({"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 2048}), None),
        (config({"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 2048}), 1500),
        (config({"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 2048}), 2048),
        (config({"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 2048}), 8192),
        (config({"type": "dynamic", "factor": 3.0}, max_pos=1024, head_dim=32), 4096),
        (config({"type": "linear", "factor": 4.0}), None),
        (config(None, theta=1000.0), None),
        (config({"rope_type": "default"}, hidden=512, heads=4), 300),
        (config({"rope_type": "longrope", "factor": 2.0}), None),
    ]
    calls: list[Callable[[], object]] = []
    for cfg, seq_len in cases:

        def call(cfg=cfg, seq_len=seq_len) -> object:
            held = SimpleNamespace(**{k: dict(v) if isinstance(v, dict) else v for k, v in vars(cfg).items()})
            if seq_len is None:
                out = ns["compute_rope_parameters"](held)
            else:
                out = ns["compute_rope_parameters"](held, seq_len)
            return out, held.rope_scaling

        calls.append(call)
    return calls


# -- PPO's clipped policy loss with the dual clip (Ye et al. 2020) and loss aggregation modes ---------------------

PP_HEAD = '''class PPOActor:
    """The actor of a PPO trainer; its policy loss reads the clip ranges and the aggregation mode from
    ``self.config.actor``."""

    def __init__(self, config):
        self.config = config

    def policy_loss(self, old_log_prob, log_prob, advantages, response_mask):
'''
PP_BODY = '''        cfg = self.config.actor
        if cfg.clip_ratio_c <= 1.0:
            raise ValueError(f"clip_ratio_c must be greater than 1.0, got {cfg.clip_ratio_c}")
        clip_low = cfg.clip_ratio_low if cfg.clip_ratio_low is not None else cfg.clip_ratio
        clip_high = cfg.clip_ratio_high if cfg.clip_ratio_high is not None else cfg.clip_ratio
        mask = np.asarray(response_mask, dtype=np.float64)

        def masked_mean(values):
            return float((values * mask).sum() / (mask.sum() + 1e-8))

        log_ratio = np.clip(log_prob - old_log_prob, -20.0, 20.0)
        ratio = np.exp(log_ratio)
        approx_kl = masked_mean(-log_ratio)
        losses1 = -advantages * ratio
        losses2 = -advantages * np.clip(ratio, 1.0 - clip_low, 1.0 + clip_high)
        clipped = np.maximum(losses1, losses2)
        clipfrac = masked_mean(losses2 > losses1)
        losses3 = -advantages * cfg.clip_ratio_c
        dual = np.minimum(losses3, clipped)
        clipfrac_lower = masked_mean((clipped > losses3) & (advantages < 0))
        pg_losses = np.where(advantages < 0, dual, clipped)
        mode = cfg.loss_agg_mode
        if mode == "token-mean":
            loss = masked_mean(pg_losses)
        elif mode == "seq-mean-token-sum":
            loss = float(np.mean((pg_losses * mask).sum(axis=-1)))
        elif mode == "seq-mean-token-mean":
            loss = float(np.mean((pg_losses * mask).sum(axis=-1) / (mask.sum(axis=-1) + 1e-8)))
        elif mode == "seq-mean-token-sum-norm":
            loss = float(np.mean((pg_losses * mask).sum(axis=-1)) / mask.shape[-1])
        else:
            raise ValueError(f"invalid loss_agg_mode: {mode}")
        return loss, clipfrac, approx_kl, clipfrac_lower
'''
PP_DOC = '''        """The clipped PPO policy loss of a batch of responses, and its statistics.

        ``old_log_prob``, ``log_prob``, ``advantages`` and ``response_mask``: (batch, response_length) arrays, the
        log-probabilities of the sampled tokens under the policy that sampled them and under the current one, the
        advantages, and 1 (or True) on the response's tokens, 0 on padding. Settings, from ``self.config.actor``:
        ``clip_ratio``, ``clip_ratio_low`` and ``clip_ratio_high`` (each None or a number; None takes
        ``clip_ratio``), ``clip_ratio_c`` (the dual clip; ValueError unless above 1.0) and ``loss_agg_mode``.

        Per token, with the log-ratio d = log_prob - old_log_prob clamped to [-20, 20] and r = exp(d), A the
        advantage: the clipped loss is ``max(-A r, -A clip(r, 1 - clip_ratio_low, 1 + clip_ratio_high))``; where
        A < 0 the loss is ``min(-A clip_ratio_c, clipped loss)``, elsewhere the clipped loss. A masked mean is the
        sum over the response's tokens divided by (their count + 1e-8).

        Returns ``(loss, clipfrac, approx_kl, clipfrac_lower)``, four floats: the aggregated loss; the masked mean
        of (clipped term > unclipped term, i.e. ``-A clip(r) > -A r``); the masked mean of -d (d clamped); the
        masked mean of (A < 0 and clipped loss > ``-A clip_ratio_c``). ``loss_agg_mode``: "token-mean" is the
        masked mean of the token losses; "seq-mean-token-sum" the mean over the batch of each response's sum of
        token losses; "seq-mean-token-mean" the mean over the batch of each response's sum divided by (its token
        count + 1e-8); "seq-mean-token-sum-norm" the mean over the batch of each response's sum, divided by the
        padded response length (the arrays' last dimension); anything else raises ValueError. No argument is
        changed.
        """
'''
PP_GOLDEN = "\n\n" + PP_HEAD + PP_DOC + PP_BODY
PP_CONFIG = '''"""Trainer configuration."""

from dataclasses import dataclass, field


@dataclass
class ActorConfig:
    clip_ratio: float = 0.2
    clip_ratio_low: float | None = None
    clip_ratio_high: float | None = None
    clip_ratio_c: float = 3.0
    loss_agg_mode: str = "token-mean"
    ppo_epochs: int = 2
    lr: float = 2.0


@dataclass
class TrainerConfig:
    actor: ActorConfig = field(default_factory=ActorConfig)
    group_size: int = 16
    steps: int = 12
'''
PP_DRIVER = '''"""GRPO-style training of a toy token policy with the clipped PPO loss: python train.py"""

import numpy as np

from rl.actor import PPOActor
from rl.config import TrainerConfig

VOCAB = 6
MAX_LEN = 8
EOS = 0
TARGET = 3


def log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def rollout(rng, theta, group_size):
    """Responses sampled token by token from position-wise logits theta, each ending at its first EOS."""
    probs = np.exp(log_softmax(theta))
    tokens = np.zeros((group_size, MAX_LEN), dtype=int)
    mask = np.zeros((group_size, MAX_LEN))
    for g in range(group_size):
        for t in range(MAX_LEN):
            tokens[g, t] = rng.choice(VOCAB, p=probs[t])
            mask[g, t] = 1.0
            if tokens[g, t] == EOS:
                break
    return tokens, mask


def token_log_probs(theta, tokens):
    return log_softmax(theta)[np.arange(MAX_LEN)[None, :], tokens]


def main():
    config = TrainerConfig()
    actor = PPOActor(config)
    rng = np.random.default_rng(0)
    theta = np.zeros((MAX_LEN, VOCAB))
    for step in range(config.steps):
        tokens, mask = rollout(rng, theta, config.group_size)
        rewards = ((tokens == TARGET) * mask).sum(axis=1) - 0.5 * (mask.sum(axis=1) < 3)
        advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
        advantages = advantages[:, None] * mask
        old = token_log_probs(theta, tokens)
        for _ in range(config.actor.ppo_epochs):
            loss, clipfrac, kl, clipfrac_lower = actor.policy_loss(old, token_log_probs(theta, tokens), advantages,
                                                                   mask)
            grad = np.zeros_like(theta)
            for idx in np.ndindex(*theta.shape):
                bumped = theta.copy()
                bumped[idx] += 1e-5
                grad[idx] = (actor.policy_loss(old, token_log_probs(bumped, tokens), advantages, mask)[0]
                             - loss) / 1e-5
            theta -= config.actor.lr * grad
        print(f"step {step}: reward {rewards.mean():.3f}, loss {loss:.4f}, clipfrac {clipfrac:.3f}, "
              f"kl {kl:.5f}, dual-clipped {clipfrac_lower:.3f}, mean length {mask.sum(axis=1).mean():.2f}")


if __name__ == "__main__":
    main()
'''

_pp = editor(PP_HEAD, PP_BODY)
_PP_CLIPS = '''        clip_low = cfg.clip_ratio_low if cfg.clip_ratio_low is not None else cfg.clip_ratio
        clip_high = cfg.clip_ratio_high if cfg.clip_ratio_high is not None else cfg.clip_ratio
'''

PP_WRONG = {
    "dual clip dropped": _pp("pg_losses = np.where(advantages < 0, dual, clipped)", "pg_losses = clipped"),
    "clip_ratio_low and clip_ratio_high ignored": _pp(_PP_CLIPS, "        clip_low = clip_high = cfg.clip_ratio\n"),
    "pins clip_ratio_c": _pp("losses3 = -advantages * cfg.clip_ratio_c", "losses3 = -advantages * 3.0"),
    "loss_agg_mode ignored": _pp('''        mode = cfg.loss_agg_mode
        if mode == "token-mean":
            loss = masked_mean(pg_losses)
        elif mode == "seq-mean-token-sum":
            loss = float(np.mean((pg_losses * mask).sum(axis=-1)))
        elif mode == "seq-mean-token-mean":
            loss = float(np.mean((pg_losses * mask).sum(axis=-1) / (mask.sum(axis=-1) + 1e-8)))
        elif mode == "seq-mean-token-sum-norm":
            loss = float(np.mean((pg_losses * mask).sum(axis=-1)) / mask.shape[-1])
        else:
            raise ValueError(f"invalid loss_agg_mode: {mode}")
''', '''        loss = masked_mean(pg_losses)
'''),
    "norm by the longest response": _pp("loss = float(np.mean((pg_losses * mask).sum(axis=-1)) / mask.shape[-1])",
                                        "loss = float(np.mean((pg_losses * mask).sum(axis=-1)) / "
                                        "mask.sum(axis=-1).max())"),
    "log-ratio not clamped": _pp("log_ratio = np.clip(log_prob - old_log_prob, -20.0, 20.0)",
                                 "log_ratio = log_prob - old_log_prob"),
    "masked mean without the guard": _pp("return float((values * mask).sum() / (mask.sum() + 1e-8))",
                                         "return float((values * mask).sum() / mask.sum())"),
    "lower clip fraction over every sign": _pp("clipfrac_lower = masked_mean((clipped > losses3) & (advantages < 0))",
                                               "clipfrac_lower = masked_mean(clipped > losses3)"),
    "clip_ratio_c not checked": _pp('''        if cfg.clip_ratio_c <= 1.0:
            raise ValueError(f"clip_ratio_c must be greater than 1.0, got {cfg.clip_ratio_c}")
''', ""),
}
PP_RIGHT = {
    "closed form by the sign of the advantage": PP_HEAD + '''        actor = self.config.actor
        if not actor.clip_ratio_c > 1.0:
            raise ValueError("clip_ratio_c must exceed 1")
        lo = actor.clip_ratio if actor.clip_ratio_low is None else actor.clip_ratio_low
        hi = actor.clip_ratio if actor.clip_ratio_high is None else actor.clip_ratio_high
        m = np.asarray(response_mask, dtype=float)
        count = m.sum()

        def mmean(x):
            return float(np.sum(np.where(m > 0, x, 0.0)) / (count + 1e-8))

        d = np.minimum(np.maximum(log_prob - old_log_prob, -20.0), 20.0)
        r = np.exp(d)
        A = advantages
        neg = A < 0
        per_token = np.where(neg, -A * np.minimum(np.maximum(r, 1.0 - lo), actor.clip_ratio_c),
                             -A * np.minimum(r, 1.0 + hi))
        clipfrac = mmean(((A > 0) & (r > 1.0 + hi)) | (neg & (r < 1.0 - lo)))
        lower = mmean(neg & (np.maximum(r, 1.0 - lo) > actor.clip_ratio_c))
        sums = np.sum(per_token * m, axis=1)
        aggregate = {
            "token-mean": lambda: mmean(per_token),
            "seq-mean-token-sum": lambda: float(sums.mean()),
            "seq-mean-token-mean": lambda: float(np.mean(sums / (m.sum(axis=1) + 1e-8))),
            "seq-mean-token-sum-norm": lambda: float(sums.mean() / m.shape[1]),
        }
        if actor.loss_agg_mode not in aggregate:
            raise ValueError(actor.loss_agg_mode)
        return aggregate[actor.loss_agg_mode](), clipfrac, mmean(-d), lower
''',
    "token by token in plain floats": PP_HEAD + '''        import math

        a = self.config.actor
        if a.clip_ratio_c <= 1.0:
            raise ValueError("bad clip_ratio_c")
        low = a.clip_ratio_low if a.clip_ratio_low is not None else a.clip_ratio
        high = a.clip_ratio_high if a.clip_ratio_high is not None else a.clip_ratio
        mode = a.loss_agg_mode
        if mode not in ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"):
            raise ValueError(mode)
        n_seq, width = np.shape(response_mask)
        sums, counts = [], []
        kl = clip = lower = 0.0
        for b in range(n_seq):
            s, c = 0.0, 0
            for t in range(width):
                if not response_mask[b][t]:
                    continue
                d = min(max(float(log_prob[b][t]) - float(old_log_prob[b][t]), -20.0), 20.0)
                r = math.exp(d)
                adv = float(advantages[b][t])
                unclipped = -adv * r
                clipped_term = -adv * min(max(r, 1.0 - low), 1.0 + high)
                loss = max(unclipped, clipped_term)
                clip += clipped_term > unclipped
                if adv < 0:
                    bound = -adv * a.clip_ratio_c
                    lower += loss > bound
                    loss = min(bound, loss)
                kl -= d
                s += loss
                c += 1
            sums.append(s)
            counts.append(c)
        total = sum(counts) + 1e-8
        if mode == "token-mean":
            value = sum(sums) / total
        elif mode == "seq-mean-token-sum":
            value = sum(sums) / n_seq
        elif mode == "seq-mean-token-mean":
            value = sum(s / (c + 1e-8) for s, c in zip(sums, counts)) / n_seq
        else:
            value = sum(sums) / n_seq / width
        return float(value), float(clip / total), float(kl / total), float(lower / total)
''',
}


def pp_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general batches: ratios far from 1 (past 1 + clip and past ``clip_ratio_c``, with advantages of
    both signs), asymmetric clip ranges, another ``clip_ratio_c``, every aggregation mode and one that is none of
    them, responses of lengths 0 to short of the padded length, log-ratios past 20, an empty mask, a boolean mask
    and ``clip_ratio_c`` of 1. Each gives the four results and the arguments as the caller holds them afterwards."""
    rng = np.random.default_rng(139)

    def settings(**kw):
        base = {"clip_ratio": 0.2, "clip_ratio_low": None, "clip_ratio_high": None, "clip_ratio_c": 3.0,
                "loss_agg_mode": "token-mean"}
        base.update(kw)
        return SimpleNamespace(actor=SimpleNamespace(**base))

    cases = []
    for kw, lengths, spread, extreme, as_bool in (
            ({}, (7, 5, 3, 6, 2, 7), 1.0, False, False),
            ({"clip_ratio_low": 0.1, "clip_ratio_high": 0.3, "loss_agg_mode": "seq-mean-token-sum"},
             (4, 6, 0, 5, 6, 2), 0.6, False, False),
            ({"clip_ratio": 0.1, "clip_ratio_c": 2.0, "loss_agg_mode": "seq-mean-token-mean"},
             (3, 0, 6, 6, 1, 4), 0.9, False, True),
            ({"clip_ratio": 0.3, "clip_ratio_c": 5.0, "loss_agg_mode": "seq-mean-token-sum-norm"},
             (5, 2, 4, 6, 3, 1), 1.2, False, False),
            ({"clip_ratio_high": 0.28}, (7, 7, 4, 2, 5, 6), 0.5, True, False),
            ({}, (0, 0, 0, 0, 0, 0), 1.0, False, False),
            ({"loss_agg_mode": "seq-mean-token-mean"}, (0, 0, 0, 0, 0, 0), 1.0, False, False),
            ({"loss_agg_mode": "sum"}, (7, 5, 3, 6, 2, 7), 1.0, False, False),
            ({"clip_ratio_c": 1.0}, (7, 5, 3, 6, 2, 7), 1.0, False, False)):
        old = rng.normal(size=(6, 7)) - 2.0
        new = old + spread * rng.normal(size=(6, 7))
        advantages = rng.normal(size=(6, 7))
        new[0, :3] = old[0, :3] + np.log([4.5, 0.3, 1.5])
        advantages[0, :3] = [-1.2, -0.7, 0.8]
        if extreme:
            new[1, :3] = old[1, :3] + np.array([25.0, -30.0, 22.0])
        mask = np.arange(7)[None, :] < np.array(lengths)[:, None]
        mask = mask if as_bool else mask.astype(float)
        cases.append((settings(**kw), old, new, advantages, mask))
    calls: list[Callable[[], object]] = []
    for cfg, old, new, advantages, mask in cases:

        def call(cfg=cfg, old=old, new=new, advantages=advantages, mask=mask) -> object:
            args = [old.copy(), new.copy(), advantages.copy(), mask.copy()]
            return ns["PPOActor"](cfg).policy_loss(*args), args

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
_MATH_NP = "import math\n\nimport numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "44-Sparsemax", "files": {"sparse/__init__.py": "", "sparse/activations.py":
     '"""Sparse probability mappings."""\n\nimport numpy as np\n' + SM_GOLDEN, "train.py": SM_DRIVER},
     "function": "sparse/activations.py::sparsemax", "command": "python train.py",
     "head": _NP, "wrong": SM_WRONG, "right": SM_RIGHT, "check": sm_check,
     "gaps": {"k laid along the last axis": ["axis", "k = np.arange(1, n + 1).reshape(shape)"],
              "cumulative sum along the last axis": ["axis", "np.cumsum(z_sorted, axis=axis)"],
              "k shaped for a 2-D batch": ["logits", "k = np.arange(1, n + 1).reshape(shape)"],
              "mask ignored": ["mask"],
              "masked logits zeroed, not removed": ["mask", "np.where(mask, z, -np.inf)"],
              "mask applied to the output only": ["mask", "np.where(mask, z, -np.inf)"],
              "all-masked slices not guarded": ["np.where(support_size > 0, p, 0.0)"],
              "mask taken as the padding": ["mask", "np.where(mask, z, -np.inf)"]}},
    {"name": "45-CRFViterbi", "files": {"tagger/__init__.py": "", "tagger/crf.py":
     '"""Linear-chain conditional random fields."""\n\nimport numpy as np\n' + CR_GOLDEN,
     "train_tagger.py": CR_DRIVER},
     "function": "tagger/crf.py::CRF.decode", "command": "python train_tagger.py",
     "head": _NP, "wrong": CR_WRONG, "right": CR_RIGHT, "check": cr_check,
     "gaps": {"end transitions left out": ["end_transitions", "score = score + self.end_transitions"],
              "start transitions left out": ["start_transitions", "self.start_transitions + emissions[0]"],
              "transitions read from the next tag": ["transitions",
                                                     "score[:, :, None] + self.transitions + emissions[i][:, None, :]"],
              "padded steps not frozen": ["mask", "score = np.where(mask[i][:, None], next_score, score)"],
              "traced back over the whole history": ["mask", "history[:seq_ends[idx]]"],
              "sequence end one past the last step": ["mask", "seq_ends = mask.sum(axis=0) - 1"],
              "batch_first ignored": ["batch_first"],
              "first step's mask not checked": ["mask[0].all()"]}},
    {"name": "46-YaRNRope", "files": {"longctx/__init__.py": "", "longctx/config.py": YA_CONFIG, "longctx/rope.py":
     '"""Rotary position embeddings and their context extension."""\n\nimport math\n\nimport numpy as np\n'
     + YA_GOLDEN, "eval_long_context.py": YA_DRIVER},
     "function": "longctx/rope.py::compute_rope_parameters", "command": "python eval_long_context.py",
     "head": _MATH_NP, "wrong": YA_WRONG, "right": YA_RIGHT, "check": ya_check,
     "gaps": {"attention_factor from the config ignored": ["attention_factor", "rope_scaling"],
              "mscale_all_dim ratio ignored": ["mscale_all_dim", "mscale", "rope_scaling"],
              "truncate flag ignored": ["truncate", "rope_scaling"],
              "ramp bounds not clamped": ["low, high = max(low, 0), min(high, dim - 1)", "original",
                                          "original_max_position_embeddings"],
              "head_dim from the config ignored": ["head_dim"],
              "partial_rotary_factor ignored": ["partial_rotary_factor"],
              "dynamic base grown below the original length": ["seq_len", "max(seq_len, original)"],
              "legacy type key not read": ["rope_scaling", 'scaling.get("type", "default")'],
              "equal ramp bounds not guarded": ["high += 0.001", "original_max_position_embeddings"]}},
    {"name": "47-PPODualClip", "files": {"rl/__init__.py": "", "rl/config.py": PP_CONFIG, "rl/actor.py":
     '"""The PPO actor."""\n\nimport numpy as np\n' + PP_GOLDEN, "train.py": PP_DRIVER},
     "function": "rl/actor.py::PPOActor.policy_loss", "command": "python train.py",
     "head": _NP, "wrong": PP_WRONG, "right": PP_RIGHT, "check": pp_check,
     "gaps": {"dual clip dropped": ["clip_ratio_c", "np.where(advantages < 0, dual, clipped)"],
              "clip_ratio_low and clip_ratio_high ignored": ["clip_ratio_low", "clip_ratio_high"],
              "pins clip_ratio_c": ["clip_ratio_c"],
              "loss_agg_mode ignored": ["loss_agg_mode"],
              "norm by the longest response": ["loss_agg_mode", "mask.shape[-1]"],
              "log-ratio not clamped": ["np.clip(log_prob - old_log_prob, -20.0, 20.0)"],
              "masked mean without the guard": ["response_mask", "mask.sum() + 1e-8"],
              "lower clip fraction over every sign": ["(clipped > losses3) & (advantages < 0)"],
              "clip_ratio_c not checked": ["clip_ratio_c", "cfg.clip_ratio_c <= 1.0"]}},
]
"""The eleventh fresh held-out tasks."""
