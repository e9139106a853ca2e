"""A fourteenth held-out set for ``wrong_answers.py --set fresh13``: four numpy tasks of shapes that no other set
nor any test fixture has. The first is sentence-level BLEU (Papineni, Roukos, Ward and Zhu 2002) with the smoothing
methods of Chen and Cherry (2014): whitespace tokens, n-gram counts clipped by their largest count in any
reference, the brevity penalty from the reference length closest to the hypothesis (ties to the shorter), a max
order and weights read from a config whose nested ``smoothing`` picks no smoothing, epsilon counts for orders with
no match (``smoothing.epsilon``), add-one on the orders above 1, or the exponential decay over the orders with no
match; the driver scores two systems on a small generated corpus with the default config (order 4, uniform
weights, the exponential decay), never with an empty or too short hypothesis nor another method. The second is a
logits processor applied once per decoding step, reading its settings from ``self.*``: CTRL's repetition penalty
(Keskar et al. 2019) on each sequence's own generated tokens, positive scores divided and negative ones multiplied,
then the locally typical filter (Meister, Pimentel, Wiher and Cotterell 2022): the tokens ordered by the distance of
their surprisal to the entropy, the smallest prefix whose mass reaches ``typical_p`` kept, never fewer than
``min_tokens_to_keep``, the rest set to ``filter_value``, with 1.0 turning either part off and banned (-inf) scores
guarded; the driver samples from a toy bigram language model with the default settings, never with a banned token,
another filter value or a minimum above 1. The third is the selective scan of a Mamba block (Gu and Dao 2023): the
step size from a projection plus ``delta_bias``, through a softplus when asked, the zero-order hold ``exp(delta A)``
for A and ``delta B`` for B, the recurrence over time, the read-out by C, the skip term D and the gate ``y *
silu(z)``, input-dependent or fixed B and C, and the last state when asked; the driver runs a tiny two-layer model
forward with the block's call (variable B and C, a bias, the softplus, D and z), never asking for the last state.
The fourth is SGDR (Loshchilov and Hutter 2017) as a scheduler's ``get_lr`` called once per step: cosine annealing
from each group's ``initial_lr`` to ``eta_min`` over cycles of ``T_0``, ``T_0 * T_mult``, ..., a linear warm-up
before the first cycle and the peak decayed by ``gamma`` at each restart; the driver trains a two-group linear model
for a few hundred steps with ``T_mult`` 1, no warm-up, ``gamma`` 1 and ``eta_min`` 0. Written before its first
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

# -- Sentence-level BLEU with the smoothing methods of Chen and Cherry (2014) -------------------------------------

BL_SIG = "def sentence_bleu(hypothesis, references, config):\n"
BL_BODY = '''    if not references:
        raise ValueError("sentence_bleu needs at least one reference")
    max_order = config.max_order
    weights = config.weights if config.weights is not None else [1.0 / max_order] * max_order
    if len(weights) != max_order:
        raise ValueError(f"expected {max_order} weights, got {len(weights)}")
    method = config.smoothing.method
    if method not in ("none", "epsilon", "add-one", "exp"):
        raise ValueError(f"unknown smoothing method {method!r}")
    hyp = hypothesis.split()
    refs = [ref.split() for ref in references]
    hyp_len = len(hyp)
    if hyp_len == 0:
        return 0.0
    ref_len = min((abs(len(ref) - hyp_len), len(ref)) for ref in refs)[1]
    log_precision = 0.0
    zeros = 0
    for n in range(1, max_order + 1):
        total = hyp_len - n + 1
        if total <= 0:
            return 0.0
        counts = Counter(tuple(hyp[i:i + n]) for i in range(total))
        max_ref = Counter()
        for ref in refs:
            for gram, count in Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1)).items():
                max_ref[gram] = max(max_ref[gram], count)
        matches = sum(min(count, max_ref[gram]) for gram, count in counts.items())
        if method == "add-one" and n > 1:
            precision = (matches + 1) / (total + 1)
        elif matches > 0:
            precision = matches / total
        elif method == "epsilon":
            precision = config.smoothing.epsilon / total
        elif method == "exp":
            zeros += 1
            precision = 1.0 / (2 ** zeros * total)
        else:
            return 0.0
        log_precision += weights[n - 1] * math.log(precision)
    brevity = 1.0 if hyp_len > ref_len else math.exp(1.0 - ref_len / hyp_len)
    return brevity * math.exp(log_precision)
'''
BL_DOC = '''    """Sentence-level BLEU of one hypothesis against one or more references, smoothed.

    ``hypothesis``: a string; ``references``: a non-empty list of strings (an empty list raises ValueError; an empty
    string is a reference of length 0). Every string is split into tokens on runs of whitespace (``str.split()``
    with no argument). ``config`` has ``max_order`` (N >= 1), ``weights`` (None: N weights of 1/N; else a sequence
    of N weights, any other length raising ValueError) and ``smoothing``, an object with ``method`` (one of "none",
    "epsilon", "add-one", "exp"; anything else raises ValueError) and ``epsilon``. The checks come first, in that
    order.

    With c the hypothesis length, for n = 1..N: the total ``l_n = c - n + 1`` (when it is 0 or less, i.e. the
    hypothesis is shorter than N tokens, the score is 0.0) and the clipped matches ``m_n``: the sum over the
    hypothesis' distinct n-grams of min(its count in the hypothesis, its largest count in any one reference). The
    precision p_n is ``(m_n + 1) / (l_n + 1)`` under "add-one" for n >= 2 (Chen and Cherry's method 2), else ``m_n /
    l_n`` when m_n > 0; when m_n = 0 it is ``epsilon / l_n`` under "epsilon" (method 1), ``1 / (2 ** k * l_n)``
    under "exp", k being 1 for the first order with no match, 2 for the second and so on (method 3), and under
    "none" (and "add-one" for n = 1) the score is 0.0.

    The brevity penalty, with r the length of the reference closest in length to c (of two equally close, the
    shorter): 1 when c > r, else ``exp(1 - r / c)``. An empty hypothesis scores 0.0. Returns the float ``BP *
    exp(sum_n w_n log p_n)``, in [0, 1]. No argument is changed.
    """
'''
BL_GOLDEN = "\n\n" + BL_SIG + BL_DOC + BL_BODY
BL_CONFIG = '''"""Scoring configuration."""

from dataclasses import dataclass, field


@dataclass
class SmoothingConfig:
    method: str = "exp"
    epsilon: float = 0.1


@dataclass
class BleuConfig:
    max_order: int = 4
    weights: tuple[float, ...] | None = None
    smoothing: SmoothingConfig = field(default_factory=SmoothingConfig)
'''
BL_DRIVER = '''"""Score two toy translation systems with smoothed sentence-level BLEU: python score_corpus.py"""

import numpy as np

from mteval.bleu import sentence_bleu
from mteval.config import BleuConfig

WORDS = ("the a cat dog bird sat ran slept on under near mat sofa garden house red small big old quickly "
         "today again").split()
N_SENTENCES = 60
N_REFERENCES = 3


def perturb(rng, tokens, substitute, drop):
    """A noisy copy of tokens: each one dropped or replaced by a random word with the given probabilities."""
    out = []
    for token in tokens:
        u = rng.random()
        if u < drop:
            continue
        out.append(str(rng.choice(WORDS)) if u < drop + substitute else token)
    return out or list(tokens[:1])


def make_corpus(rng):
    """Source sentences of 8 to 16 words, each with three paraphrase references."""
    corpus = []
    for _ in range(N_SENTENCES):
        source = [str(w) for w in rng.choice(WORDS, size=int(rng.integers(8, 17)))]
        refs = [" ".join(perturb(rng, source, 0.15, 0.05)) for _ in range(N_REFERENCES)]
        corpus.append((source, refs))
    return corpus


def main():
    rng = np.random.default_rng(0)
    corpus = make_corpus(rng)
    config = BleuConfig()
    for name, substitute, drop in (("system A", 0.2, 0.05), ("system B", 0.35, 0.15)):
        scores = []
        for source, refs in corpus:
            hypothesis = " ".join(perturb(rng, source, substitute, drop))
            scores.append(sentence_bleu(hypothesis, refs, config))
        scores = np.array(scores)
        print(f"{name}: mean sentence BLEU {100 * scores.mean():.2f}, median {100 * np.median(scores):.2f}, "
              f"below 10: {int(np.sum(scores < 0.1))} of {len(scores)}")


if __name__ == "__main__":
    main()
'''

_bl = editor(BL_SIG, BL_BODY)

BL_WRONG = {
    "counts not clipped": _bl("matches = sum(min(count, max_ref[gram]) for gram, count in counts.items())",
                              "matches = sum(count for gram, count in counts.items() if max_ref[gram] > 0)"),
    "closest-length ties broken by reference order": _bl(
        "ref_len = min((abs(len(ref) - hyp_len), len(ref)) for ref in refs)[1]",
        "ref_len = min((len(ref) for ref in refs), key=lambda length: abs(length - hyp_len))"),
    "brevity penalty from the shortest reference": _bl(
        "ref_len = min((abs(len(ref) - hyp_len), len(ref)) for ref in refs)[1]",
        "ref_len = min(len(ref) for ref in refs)"),
    "brevity penalty not capped at 1": _bl(
        "brevity = 1.0 if hyp_len > ref_len else math.exp(1.0 - ref_len / hyp_len)",
        "brevity = math.exp(1.0 - ref_len / hyp_len)"),
    "pins epsilon": _bl("precision = config.smoothing.epsilon / total", "precision = 0.1 / total"),
    "add-one on unigrams too": _bl('if method == "add-one" and n > 1:', 'if method == "add-one":'),
    "exponential decay not compounded": _bl('''            zeros += 1
            precision = 1.0 / (2 ** zeros * total)
''', '''            precision = 1.0 / (2 * total)
'''),
    "weights from the config ignored": _bl(
        "weights = config.weights if config.weights is not None else [1.0 / max_order] * max_order",
        "weights = [1.0 / max_order] * max_order"),
    "tokenised on single spaces": _bl('''    hyp = hypothesis.split()
    refs = [ref.split() for ref in references]
''', '''    hyp = hypothesis.split(" ")
    refs = [ref.split(" ") for ref in references]
'''),
    "short hypothesis not guarded": _bl('''        if total <= 0:
            return 0.0
''', ""),
}
BL_RIGHT = {
    "dicts of n-grams, precisions collected first": BL_SIG + '''    if len(references) == 0:
        raise ValueError("no reference")
    N = config.max_order
    w = [1.0 / N] * N if config.weights is None else list(config.weights)
    if len(w) != N:
        raise ValueError("weights do not match max_order")
    smooth = config.smoothing
    if smooth.method not in {"none", "epsilon", "add-one", "exp"}:
        raise ValueError(smooth.method)

    def ngram_counts(tokens, n):
        table = {}
        for start in range(len(tokens) - n + 1):
            key = " ".join(tokens[start:start + n])
            table[key] = table.get(key, 0) + 1
        return table

    hyp = hypothesis.split()
    refs = [r.split() for r in references]
    c = len(hyp)
    if c == 0 or c < N:
        return 0.0
    precisions = []
    decay = 1.0
    for n in range(1, N + 1):
        mine = ngram_counts(hyp, n)
        theirs = [ngram_counts(r, n) for r in refs]
        m = 0
        for key, count in mine.items():
            m += min(count, max(t.get(key, 0) for t in theirs))
        total = c - n + 1
        if smooth.method == "add-one" and n >= 2:
            precisions.append((m + 1.0) / (total + 1.0))
        elif m:
            precisions.append(m / total)
        elif smooth.method == "epsilon":
            precisions.append(smooth.epsilon / total)
        elif smooth.method == "exp":
            decay *= 2.0
            precisions.append(1.0 / (decay * total))
        else:
            return 0.0
    lengths = sorted(len(r) for r in refs)
    r = lengths[0]
    for length in lengths:
        if abs(length - c) < abs(r - c):
            r = length
    bp = 1.0 if c > r else math.exp(1.0 - r / c)
    return bp * math.exp(sum(wn * math.log(p) for wn, p in zip(w, precisions)))
''',
    "numpy logs, Counter intersections": BL_SIG + '''    import numpy as np

    if len(references) < 1:
        raise ValueError("at least one reference is needed")
    order = int(config.max_order)
    weights = np.full(order, 1.0 / order) if config.weights is None else np.asarray(config.weights, dtype=float)
    if weights.shape != (order,):
        raise ValueError("one weight per order")
    how = config.smoothing.method
    if how not in ("none", "epsilon", "add-one", "exp"):
        raise ValueError(how)
    words = hypothesis.split()
    tokenised = [ref.split() for ref in references]
    if not words:
        return 0.0

    def grams(tokens, n):
        return Counter(zip(*[tokens[k:] for k in range(n)]))

    logs = np.zeros(order)
    missing = 0
    for n in range(1, order + 1):
        denominator = len(words) - n + 1
        if denominator < 1:
            return 0.0
        best = Counter()
        for ref in tokenised:
            best |= grams(ref, n)
        hits = sum((grams(words, n) & best).values())
        if how == "add-one" and n != 1:
            logs[n - 1] = np.log(hits + 1.0) - np.log(denominator + 1.0)
        elif hits:
            logs[n - 1] = np.log(hits) - np.log(denominator)
        elif how == "epsilon":
            logs[n - 1] = np.log(config.smoothing.epsilon) - np.log(denominator)
        elif how == "exp":
            missing += 1
            logs[n - 1] = -missing * np.log(2.0) - np.log(denominator)
        else:
            return 0.0
    c = len(words)
    r = sorted((len(ref) for ref in tokenised), key=lambda length: (abs(length - c), length))[0]
    penalty = 0.0 if c > r else 1.0 - r / c
    return float(np.exp(penalty + weights @ logs))
''',
}


def bl_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general sentences: the default config with repeated words (clipping by the largest count in one
    reference) and two orders with no match, a hypothesis as far from two references (shorter and longer, in both
    orders), a hypothesis longer than every reference, an empty reference among others, epsilon smoothing with
    another epsilon, add-one with and without unigram matches, no smoothing with and without a zero order, other
    weights and orders, extra whitespace and tabs, hypotheses shorter than the max order, an empty one, an empty
    list of references, weights of the wrong length and an unknown method. Each gives the score and the arguments
    as the caller holds them afterwards."""
    def config(method="exp", epsilon=0.1, max_order=4, weights=None):
        return SimpleNamespace(max_order=max_order, weights=weights,
                               smoothing=SimpleNamespace(method=method, epsilon=epsilon))

    base = ["the cat the cat sat on the mat today", ["the cat sat on the mat", "a cat sat on the red mat today",
                                                     "the the cat was on a mat"]]
    cases: list[tuple[str, list[str], SimpleNamespace]] = [
        (base[0], base[1], config()),
        ("the dog ran under the big old sofa", ["a dog ran under sofa", "the dog ran quickly under an old big sofa",
                                                "the small dog ran quickly under the big old sofa today"], config()),
        ("one two three four five six", ["one two three four five six seven", "one two three four five"],
         config()),
        ("one two three four five six", ["one two three four five", "one two three four five six seven"],
         config("none")),
        ("red house near the garden again", ["red house near the garden again", "a red house by the garden", ""],
         config("none")),
        ("a b c d e f g h i j", ["a b c d", "a b c x e", "b c d"], config()),
        ("the cat ran on the sofa today", ["a dog slept under the red mat", "the bird sat near the house"],
         config("epsilon", epsilon=0.05)),
        ("the cat ran on the sofa today", ["a dog slept under the red mat", "the bird sat near the house"],
         config("epsilon")),
        ("the old cat slept on a sofa", ["the old dog slept under a mat", "an old cat sat on the sofa"],
         config("add-one")),
        ("x y z w", ["a b c d e"], config("add-one")),
        ("x y z w", ["a b c d e"], config("exp", max_order=2)),
        ("the cat sat on mat", ["the cat sat on the mat"], config("none")),
        ("the big cat sat on the mat", ["the big cat sat on the mat"], config("none", weights=(0.4, 0.3, 0.2, 0.1))),
        ("the big dog sat on a mat", ["the big cat sat on the mat", "a big dog sat on it"],
         config("exp", max_order=3, weights=(0.5, 0.3, 0.2))),
        ("the big dog sat on a mat", ["the big cat sat on the mat"], config("epsilon", max_order=2)),
        ("  the cat\tsat  on the mat ", ["the  cat sat on\tthe mat", " a cat sat on a mat"], config()),
        ("the cat", ["the cat sat on the mat"], config()),
        ("the cat sat", ["the cat sat"], config("add-one")),
        ("", ["the cat sat on the mat"], config()),
        ("the cat sat on the mat", [], config()),
        ("the cat sat on the mat", ["the cat sat on the mat"], config(weights=(0.5, 0.5))),
        ("the cat sat on the mat", ["the cat sat on the mat"], config("floor")),
    ]
    calls: list[Callable[[], object]] = []
    for hypothesis, references, cfg in cases:

        def call(hypothesis=hypothesis, references=references, cfg=cfg) -> object:
            held = list(references)
            return ns["sentence_bleu"](hypothesis, held, cfg), held

        calls.append(call)
    return calls


# -- A repetition penalty (Keskar et al. 2019) then locally typical sampling's filter (Meister et al. 2022) -------

TY_HEAD = '''class RepetitionTypicalProcessor:
    """Applied to each decoding step's next-token scores: CTRL's repetition penalty on the tokens each sequence has
    so far, then the filter of locally typical sampling. A penalty of 1.0 or a ``typical_p`` of 1.0 turns that part
    off."""

    def __init__(self, penalty=1.2, typical_p=0.9, min_tokens_to_keep=1, filter_value=-np.inf):
        self.penalty = penalty
        self.typical_p = typical_p
        self.min_tokens_to_keep = min_tokens_to_keep
        self.filter_value = filter_value

    def __call__(self, input_ids, scores):
'''
TY_BODY = '''        if self.penalty <= 0:
            raise ValueError(f"penalty must be positive, got {self.penalty}")
        if not 0.0 < self.typical_p <= 1.0:
            raise ValueError(f"typical_p must be in (0, 1], got {self.typical_p}")
        scores = np.array(scores, dtype=np.float64)
        input_ids = np.asarray(input_ids, dtype=np.int64)
        if self.penalty != 1.0:
            rows = np.arange(scores.shape[0])[:, None]
            seen = scores[rows, input_ids]
            scores[rows, input_ids] = np.where(seen < 0, seen * self.penalty, seen / self.penalty)
        if self.typical_p < 1.0:
            vocab = scores.shape[-1]
            shifted = scores - scores.max(axis=-1, keepdims=True)
            exps = np.exp(shifted)
            total = exps.sum(axis=-1, keepdims=True)
            probs = exps / total
            log_probs = shifted - np.log(total)
            entropy = -np.nansum(probs * log_probs, axis=-1, keepdims=True)
            distance = np.abs(-log_probs - entropy)
            order = np.argsort(distance, axis=-1, kind="stable")
            cumulative = np.cumsum(np.take_along_axis(probs, order, axis=-1), axis=-1)
            keep = (cumulative < self.typical_p).sum(axis=-1) + 1
            keep = np.clip(keep, self.min_tokens_to_keep, vocab)
            ranks = np.empty_like(order)
            np.put_along_axis(ranks, order, np.broadcast_to(np.arange(vocab), order.shape), axis=-1)
            scores = np.where(ranks < keep[:, None], scores, self.filter_value)
        return scores
'''
TY_DOC = '''        """The scores of one decoding step after the repetition penalty and the typical filter.

        ``input_ids``: an int array (batch, cur_len), the tokens each sequence holds so far (cur_len may be 0);
        ``scores``: a float array (batch, vocab), the model's next-token logits, each row with at least one
        finite entry (-inf marks a banned token). Settings, read from ``self``: ``penalty`` (> 0, else
        ValueError), ``typical_p`` (in (0, 1], else ValueError; the checks come first), ``min_tokens_to_keep``
        and ``filter_value``.

        The repetition penalty (Keskar et al. 2019): in row b, the score of each token that occurs in
        ``input_ids[b]`` (once or more: it is penalised once) becomes ``score * penalty`` when it is negative and
        ``score / penalty`` otherwise; other rows' tokens are not touched. A penalty of 1.0 changes nothing.

        Then, unless ``typical_p`` is 1.0, the typical filter (Meister et al. 2022) on the penalised scores, row by
        row: p = softmax(scores), the entropy H = -sum p log p over the tokens with p > 0, and each token's
        distance ``|-log p - H|``. With the tokens ordered by increasing distance (equal distances by increasing
        token id), k is the position (from 1) of the first token at which the cumulative p reaches ``typical_p``
        (>=), or the vocabulary size when none does, raised to ``min_tokens_to_keep`` and capped at the vocabulary
        size. The first k tokens of that order keep their (penalised) score, every other token gets
        ``filter_value``.

        Returns a new float64 array (batch, vocab); ``input_ids`` and ``scores`` are not changed.
        """
'''
TY_GOLDEN = "\n\n" + TY_HEAD + TY_DOC + TY_BODY
TY_DRIVER = '''"""Sample continuations from a toy bigram language model with a repetition penalty and typical sampling:
python generate.py"""

import numpy as np

from decoding.processors import RepetitionTypicalProcessor

VOCAB = 40
STEPS = 24


class BigramLM:
    """Next-token logits from the last token, with a bias towards a few frequent tokens."""

    def __init__(self, rng):
        self.table = 2.0 * rng.normal(size=(VOCAB, VOCAB))
        self.bias = np.zeros(VOCAB)
        self.bias[:5] = 1.5

    def __call__(self, input_ids):
        return self.table[input_ids[:, -1]] + self.bias


def sample(rng, scores):
    probs = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    return np.array([rng.choice(VOCAB, p=row) for row in probs])


def main():
    rng = np.random.default_rng(0)
    model = BigramLM(rng)
    processor = RepetitionTypicalProcessor()
    prompts = np.array([[1, 2, 3, 4], [7, 7, 9, 12], [20, 3, 20, 3], [31, 0, 15, 39], [5, 6, 5, 8]])
    input_ids = prompts.copy()
    kept = []
    for _ in range(STEPS):
        scores = processor(input_ids, model(input_ids))
        kept.append(np.isfinite(scores).sum(axis=-1).mean())
        input_ids = np.concatenate([input_ids, sample(rng, scores)[:, None]], axis=1)
    for row in input_ids:
        print(" ".join(str(t) for t in row), f"| distinct {len(set(row[4:].tolist()))}/{STEPS}")
    print(f"mean tokens kept per step {np.mean(kept):.2f} of {VOCAB}")


if __name__ == "__main__":
    main()
'''

_ty = editor(TY_HEAD, TY_BODY)
_TY_PENALTY = '''        if self.penalty != 1.0:
            rows = np.arange(scores.shape[0])[:, None]
            seen = scores[rows, input_ids]
            scores[rows, input_ids] = np.where(seen < 0, seen * self.penalty, seen / self.penalty)
'''

TY_WRONG = {
    "penalty divides every score": _ty(
        "scores[rows, input_ids] = np.where(seen < 0, seen * self.penalty, seen / self.penalty)",
        "scores[rows, input_ids] = seen / self.penalty"),
    "penalty compounded for repeated tokens": _ty(_TY_PENALTY, '''        if self.penalty != 1.0:
            for b in range(scores.shape[0]):
                for token in input_ids[b]:
                    value = scores[b, token]
                    scores[b, token] = value * self.penalty if value < 0 else value / self.penalty
'''),
    "penalty on every row's tokens": _ty(_TY_PENALTY, '''        if self.penalty != 1.0:
            seen_tokens = np.unique(input_ids)
            seen = scores[:, seen_tokens]
            scores[:, seen_tokens] = np.where(seen < 0, seen * self.penalty, seen / self.penalty)
'''),
    "typical mass stops short of typical_p": _ty("keep = (cumulative < self.typical_p).sum(axis=-1) + 1",
                                                 "keep = (cumulative < self.typical_p).sum(axis=-1)"),
    "min_tokens_to_keep ignored": _ty("keep = np.clip(keep, self.min_tokens_to_keep, vocab)",
                                      "keep = np.minimum(keep, vocab)"),
    "entropy not guarded against banned tokens": _ty(
        "entropy = -np.nansum(probs * log_probs, axis=-1, keepdims=True)",
        "entropy = -np.sum(probs * log_probs, axis=-1, keepdims=True)"),
    "distance to the entropy not absolute": _ty("distance = np.abs(-log_probs - entropy)",
                                                "distance = -log_probs - entropy"),
    "pins filter_value": _ty("scores = np.where(ranks < keep[:, None], scores, self.filter_value)",
                             "scores = np.where(ranks < keep[:, None], scores, -np.inf)"),
    "scores changed in place": _ty("scores = np.array(scores, dtype=np.float64)",
                                   "scores = np.asarray(scores, dtype=np.float64)"),
    "filter on the scores before the penalty": TY_HEAD + TY_BODY.replace(_TY_PENALTY, "").replace(
        "        return scores\n", _TY_PENALTY + "        return scores\n"),
}
TY_RIGHT = {
    "row by row with sets and sorted": TY_HEAD + '''        import math

        if not self.penalty > 0:
            raise ValueError("penalty")
        if self.typical_p <= 0 or self.typical_p > 1:
            raise ValueError("typical_p")
        out = np.array(scores, dtype=float, copy=True)
        ids = np.asarray(input_ids)
        for b in range(out.shape[0]):
            if self.penalty != 1.0:
                for token in set(ids[b].tolist()):
                    v = out[b, token]
                    out[b, token] = v * self.penalty if v < 0 else v / self.penalty
            if self.typical_p == 1.0:
                continue
            row = out[b].tolist()
            top = max(row)
            weights = [math.exp(v - top) for v in row]
            z = sum(weights)
            p = [w / z for w in weights]
            logp = [v - top - math.log(z) for v in row]
            h = -sum(pi * li for pi, li in zip(p, logp) if pi > 0)
            dist = [abs(-li - h) for li in logp]
            ranked = sorted(range(len(row)), key=lambda j: dist[j])
            k, mass = len(row), 0.0
            for position, j in enumerate(ranked, start=1):
                mass += p[j]
                if mass >= self.typical_p:
                    k = position
                    break
            k = min(max(k, self.min_tokens_to_keep), len(row))
            for j in ranked[k:]:
                out[b, j] = self.filter_value
        return out
''',
    "masks of seen tokens, first crossing by argmax": TY_HEAD + '''        p_rep, mass = self.penalty, self.typical_p
        if p_rep <= 0 or not (0 < mass <= 1):
            raise ValueError("invalid processor settings")
        logits = np.asarray(scores, dtype=np.float64).copy()
        seen = np.zeros(logits.shape, dtype=bool)
        np.put_along_axis(seen, np.asarray(input_ids, dtype=np.intp), True, axis=1)
        logits = np.where(seen, np.where(logits < 0, logits * p_rep, logits / p_rep), logits)
        if mass == 1.0:
            return logits
        m = logits.max(axis=1, keepdims=True)
        e = np.exp(logits - m)
        p = e / e.sum(axis=1, keepdims=True)
        logp = logits - m - np.log(e.sum(axis=1, keepdims=True))
        h = -np.where(p > 0, p * np.where(p > 0, logp, 0.0), 0.0).sum(axis=1, keepdims=True)
        idx = np.argsort(np.abs(logp + h), axis=1, kind="mergesort")
        cdf = np.cumsum(np.take_along_axis(p, idx, axis=1), axis=1)
        reached = cdf >= mass
        k = np.where(reached.any(axis=1), reached.argmax(axis=1) + 1, logits.shape[1])
        k = np.minimum(np.maximum(k, self.min_tokens_to_keep), logits.shape[1])
        drop_sorted = np.arange(logits.shape[1])[None, :] >= k[:, None]
        drop = np.zeros_like(drop_sorted)
        np.put_along_axis(drop, idx, drop_sorted, axis=1)
        logits[drop] = self.filter_value
        return logits
''',
}


def ty_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general batches: rows of different prefixes with repeated tokens and scores of both signs at
    them, the penalty off, the filter off, a minimum above the tokens the mass needs, another filter value, banned
    (-inf) tokens, equal scores (ties), an empty prefix, integer scores, and settings out of range. Each gives the
    result and the arguments as the caller holds them afterwards."""
    rng = np.random.default_rng(151)

    def processor(**kw):
        settings = {"penalty": 1.3, "typical_p": 0.8, "min_tokens_to_keep": 1, "filter_value": -np.inf}
        settings.update(kw)
        obj = ns["RepetitionTypicalProcessor"]()
        for key, value in settings.items():
            setattr(obj, key, value)
        return obj

    ids = np.array([[1, 4, 4, 9, 2], [0, 0, 0, 0, 0], [11, 3, 7, 3, 10], [5, 6, 8, 2, 1]])
    cases: list[tuple[Any, np.ndarray, np.ndarray]] = []
    for kw in ({}, {"penalty": 1.0, "typical_p": 0.5}, {"penalty": 2.0, "typical_p": 1.0},
               {"typical_p": 0.2, "min_tokens_to_keep": 5}, {"typical_p": 0.6, "filter_value": -1e4},
               {"penalty": 0.7, "typical_p": 0.95}):
        scores = 2.0 * rng.normal(size=(4, 12))
        scores[0, 4], scores[0, 9] = 1.5, -2.5
        scores[2, 3] = -0.8
        cases.append((processor(**kw), ids.copy(), scores))
    banned = 1.5 * rng.normal(size=(3, 10))
    banned[0, [2, 5]] = -np.inf
    banned[1, 7] = -np.inf
    banned[2, :6] = -np.inf
    cases.append((processor(typical_p=0.9), np.array([[1, 1], [2, 3], [8, 9]]), banned))
    cases.append((processor(penalty=1.0, typical_p=0.5), np.array([[0], [3]]), np.zeros((2, 4))))
    cases.append((processor(penalty=1.5, typical_p=0.7), np.zeros((3, 0), dtype=int), rng.normal(size=(3, 8))))
    cases.append((processor(typical_p=0.85), np.array([[1, 2, 2], [0, 5, 3]]), np.array([[3, -1, 2, 0, 1, -4],
                                                                                          [0, 2, 2, -3, 5, 1]])))
    for kw in ({"penalty": 0.0}, {"typical_p": 0.0}, {"typical_p": 1.2}):
        cases.append((processor(**kw), ids.copy(), rng.normal(size=(4, 12))))
    calls: list[Callable[[], object]] = []
    for proc, input_ids, scores in cases:

        def call(proc=proc, input_ids=input_ids, scores=scores) -> object:
            held_ids, held_scores = input_ids.copy(), scores.copy()
            return proc(held_ids, held_scores), held_ids, held_scores

        calls.append(call)
    return calls


# -- The selective scan of a Mamba block (Gu and Dao 2023) ---------------------------------------------------------

SS_SIG = ("def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,\n"
          "                   return_last_state=False):\n")
SS_BODY = '''    u = np.asarray(u, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    if delta_bias is not None:
        delta = delta + np.asarray(delta_bias, dtype=np.float64)[None, :, None]
    if delta_softplus:
        delta = np.logaddexp(0.0, delta)
    batch, dim, length = u.shape
    variable_B = B.ndim == 3
    variable_C = C.ndim == 3
    x = np.zeros((batch, dim, A.shape[1]))
    ys = []
    for t in range(length):
        dt = delta[:, :, t, None]
        b_t = B[:, None, :, t] if variable_B else B[None]
        c_t = C[:, None, :, t] if variable_C else C[None]
        x = np.exp(dt * A) * x + dt * b_t * u[:, :, t, None]
        ys.append((x * c_t).sum(axis=-1))
    y = np.stack(ys, axis=-1) if length else np.zeros((batch, dim, 0))
    if D is not None:
        y = y + np.asarray(D, dtype=np.float64)[None, :, None] * u
    if z is not None:
        z = np.asarray(z, dtype=np.float64)
        y = y * (z / (1.0 + np.exp(-z)))
    if return_last_state:
        return y, x
    return y
'''
SS_DOC = '''    """The selective state-space scan of a Mamba block (Gu and Dao 2023), the reference recurrence.

    Shapes: ``u`` and ``delta`` (batch, dim, length); ``A`` (dim, state); ``B`` and ``C`` each either
    input-dependent, (batch, state, length), or fixed, (dim, state); ``D`` None or (dim,); ``z`` None or (batch,
    dim, length); ``delta_bias`` None or (dim,). Any of them may be a list or an array of another float dtype.

    The step size: ``delta + delta_bias`` (per channel, when given), then, when ``delta_softplus``, the softplus
    ``log(1 + exp(.))``, computed so that it neither overflows nor underflows (large inputs give themselves). The
    state x (batch, dim, state) starts at zero and for t = 0..length-1 becomes ``exp(delta_t A) * x + delta_t B_t
    u_t`` (the zero-order hold for A and the simplified Euler ``delta B`` for B; delta_t and u_t broadcast over the
    state, B_t the (batch, state) slice of a variable B at t or the fixed (dim, state) B); the output at t is the
    sum over the state of ``x * C_t``, C_t likewise. Then ``y += D * u`` per channel when D is given, and, when z
    is given, ``y = y * silu(z)`` with ``silu(z) = z * sigmoid(z)``, in that order.

    Returns y, a float64 (batch, dim, length) array, or ``(y, last_state)`` when ``return_last_state``, the state
    after the last step (zeros for length 0). No argument is changed.
    """
'''
SS_GOLDEN = "\n\n" + SS_SIG + SS_DOC + SS_BODY
SS_BLOCK = '''"""A Mamba block: input projection, causal depthwise convolution, selective scan, gated output."""

import numpy as np

from mamba_np.selective_scan import selective_scan


def silu(x):
    return x / (1.0 + np.exp(-x))


class MambaBlock:
    def __init__(self, d_model, rng, d_state=8, d_conv=4, expand=2, dt_min=0.001, dt_max=0.1):
        self.d_inner = expand * d_model
        self.d_state = d_state
        self.dt_rank = max(1, d_model // 16)
        self.in_proj = rng.normal(scale=d_model ** -0.5, size=(d_model, 2 * self.d_inner))
        self.conv_w = rng.normal(scale=d_conv ** -0.5, size=(self.d_inner, d_conv))
        self.conv_b = np.zeros(self.d_inner)
        self.x_proj = rng.normal(scale=self.d_inner ** -0.5, size=(self.d_inner, self.dt_rank + 2 * d_state))
        self.dt_proj = rng.normal(scale=self.dt_rank ** -0.5, size=(self.dt_rank, self.d_inner))
        dt = np.exp(rng.uniform(np.log(dt_min), np.log(dt_max), size=self.d_inner))
        self.dt_bias = dt + np.log(-np.expm1(-dt))  # the inverse softplus of dt
        self.A_log = np.log(np.tile(np.arange(1, d_state + 1, dtype=float), (self.d_inner, 1)))
        self.D = np.ones(self.d_inner)
        self.out_proj = rng.normal(scale=self.d_inner ** -0.5, size=(self.d_inner, d_model))

    def __call__(self, hidden):
        """hidden: (batch, length, d_model) -> (batch, length, d_model)."""
        _, length, _ = hidden.shape
        xz = hidden @ self.in_proj
        x, z = xz[..., :self.d_inner], xz[..., self.d_inner:]
        k = self.conv_w.shape[1]
        padded = np.concatenate([np.zeros((x.shape[0], k - 1, self.d_inner)), x], axis=1)
        x = sum(padded[:, j:j + length] * self.conv_w[:, j] for j in range(k)) + self.conv_b
        x = silu(x)
        x_dbl = x @ self.x_proj
        dt = x_dbl[..., :self.dt_rank]
        B = x_dbl[..., self.dt_rank:self.dt_rank + self.d_state]
        C = x_dbl[..., self.dt_rank + self.d_state:]
        delta = (dt @ self.dt_proj).transpose(0, 2, 1)
        A = -np.exp(self.A_log)
        y = selective_scan(x.transpose(0, 2, 1), delta, A, B.transpose(0, 2, 1), C.transpose(0, 2, 1),
                           D=self.D, z=z.transpose(0, 2, 1), delta_bias=self.dt_bias, delta_softplus=True)
        return y.transpose(0, 2, 1) @ self.out_proj
'''
SS_DRIVER = '''"""Run a tiny two-layer Mamba language model forward on random tokens: python run_model.py"""

import numpy as np

from mamba_np.block import MambaBlock

VOCAB = 32
D_MODEL = 16
N_LAYERS = 2


def rms_norm(x, eps=1e-5):
    return x / np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + eps)


def main():
    rng = np.random.default_rng(0)
    embedding = rng.normal(size=(VOCAB, D_MODEL))
    layers = [MambaBlock(D_MODEL, rng) for _ in range(N_LAYERS)]
    tokens = rng.integers(0, VOCAB, size=(3, 20))
    hidden = embedding[tokens]
    for i, layer in enumerate(layers):
        hidden = hidden + layer(rms_norm(hidden))
        print(f"layer {i}: mean |h| {np.abs(hidden).mean():.4f}, last-step norm {np.linalg.norm(hidden[:, -1]):.4f}")
    logits = rms_norm(hidden) @ embedding.T
    logits -= logits.max(axis=-1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    nll = -np.mean(np.take_along_axis(log_probs[:, :-1], tokens[:, 1:, None], axis=-1))
    print(f"next-token nll of the untrained model {nll:.4f}")


if __name__ == "__main__":
    main()
'''

_ss = editor(SS_SIG, SS_BODY)
_SS_DELTA = '''    if delta_bias is not None:
        delta = delta + np.asarray(delta_bias, dtype=np.float64)[None, :, None]
    if delta_softplus:
        delta = np.logaddexp(0.0, delta)
'''
_SS_TAIL = '''    if D is not None:
        y = y + np.asarray(D, dtype=np.float64)[None, :, None] * u
    if z is not None:
        z = np.asarray(z, dtype=np.float64)
        y = y * (z / (1.0 + np.exp(-z)))
'''

SS_WRONG = {
    "delta_bias added after the softplus": _ss(_SS_DELTA, '''    if delta_softplus:
        delta = np.logaddexp(0.0, delta)
    if delta_bias is not None:
        delta = delta + np.asarray(delta_bias, dtype=np.float64)[None, :, None]
'''),
    "delta_softplus ignored": _ss('''    if delta_softplus:
        delta = np.logaddexp(0.0, delta)
''', '''    delta = np.logaddexp(0.0, delta)
'''),
    "softplus overflows": _ss("delta = np.logaddexp(0.0, delta)", "delta = np.log1p(np.exp(delta))"),
    "B by the exact zero-order hold": _ss(
        "x = np.exp(dt * A) * x + dt * b_t * u[:, :, t, None]",
        "x = np.exp(dt * A) * x + (np.exp(dt * A) - 1.0) / A * b_t * u[:, :, t, None]"),
    "output read before the state update": _ss('''        x = np.exp(dt * A) * x + dt * b_t * u[:, :, t, None]
        ys.append((x * c_t).sum(axis=-1))
''', '''        ys.append((x * c_t).sum(axis=-1))
        x = np.exp(dt * A) * x + dt * b_t * u[:, :, t, None]
'''),
    "skip added after the gate": _ss(_SS_TAIL, '''    if z is not None:
        z = np.asarray(z, dtype=np.float64)
        y = y * (z / (1.0 + np.exp(-z)))
    if D is not None:
        y = y + np.asarray(D, dtype=np.float64)[None, :, None] * u
'''),
    "gate by the sigmoid": _ss("y = y * (z / (1.0 + np.exp(-z)))", "y = y / (1.0 + np.exp(-z))"),
    "fixed B and C not supported": _ss('''        b_t = B[:, None, :, t] if variable_B else B[None]
        c_t = C[:, None, :, t] if variable_C else C[None]
''', '''        b_t = B[:, None, :, t]
        c_t = C[:, None, :, t]
'''),
    "last state not returned": _ss('''    if return_last_state:
        return y, x
''', ""),
    "A taken as its log": _ss("    A = np.asarray(A, dtype=np.float64)\n",
                              "    A = -np.exp(np.asarray(A, dtype=np.float64))\n"),
}
SS_RIGHT = {
    "closed form over all pairs of steps": SS_SIG + '''    u = np.asarray(u, dtype=float)
    dt = np.asarray(delta, dtype=float)
    if delta_bias is not None:
        dt = dt + np.reshape(np.asarray(delta_bias, dtype=float), (1, -1, 1))
    if delta_softplus:
        dt = np.maximum(dt, 0.0) + np.log1p(np.exp(-np.abs(dt)))
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    C = np.asarray(C, dtype=float)
    n_batch, n_dim, L = u.shape
    Bt = np.einsum("bnl->bln", B)[:, None] if B.ndim == 3 else B[None, None, :, :].transpose(0, 2, 1, 3)
    Ct = np.einsum("bnl->bln", C)[:, None] if C.ndim == 3 else C[None, None, :, :].transpose(0, 2, 1, 3)
    Bt = np.broadcast_to(Bt, (n_batch, n_dim, L, A.shape[1]))
    Ct = np.broadcast_to(Ct, (n_batch, n_dim, L, A.shape[1]))
    drive = dt[..., None] * Bt * u[..., None]
    S = np.cumsum(dt[..., None] * A[None, :, None, :], axis=2)
    gap = S[:, :, :, None, :] - S[:, :, None, :, :]
    lower = np.tril(np.ones((L, L), dtype=bool))[None, None, :, :, None]
    decay = np.exp(np.where(lower, gap, -np.inf))
    states = np.einsum("bdtsn,bdsn->bdtn", decay, drive)
    y = np.einsum("bdtn,bdtn->bdt", states, Ct)
    if D is not None:
        y = y + np.asarray(D, dtype=float)[:, None] * u
    if z is not None:
        g = np.asarray(z, dtype=float)
        y = y * g * (1.0 / (1.0 + np.exp(-g)))
    if not return_last_state:
        return y
    last = states[:, :, -1] if L else np.zeros((n_batch, n_dim, A.shape[1]))
    return y, last
''',
    "channel by channel with math": SS_SIG + '''    import math

    U = np.asarray(u, dtype=float)
    Dl = np.asarray(delta, dtype=float)
    Am = np.asarray(A, dtype=float)
    Bm = np.asarray(B, dtype=float)
    Cm = np.asarray(C, dtype=float)
    nb, nd, nl = U.shape
    ns = Am.shape[1]
    y = np.zeros((nb, nd, nl))
    last = np.zeros((nb, nd, ns))

    def softplus(v):
        return v + math.log1p(math.exp(-v)) if v > 0 else math.log1p(math.exp(v))

    for b in range(nb):
        for d in range(nd):
            h = [0.0] * ns
            for t in range(nl):
                step = float(Dl[b, d, t]) + (float(delta_bias[d]) if delta_bias is not None else 0.0)
                if delta_softplus:
                    step = softplus(step)
                for n in range(ns):
                    bn = Bm[b, n, t] if Bm.ndim == 3 else Bm[d, n]
                    h[n] = math.exp(step * Am[d, n]) * h[n] + step * bn * U[b, d, t]
                out = sum(h[n] * (Cm[b, n, t] if Cm.ndim == 3 else Cm[d, n]) for n in range(ns))
                if D is not None:
                    out += float(D[d]) * U[b, d, t]
                if z is not None:
                    g = float(z[b][d][t])
                    out *= g / (1.0 + math.exp(-g)) if g > -700 else 0.0
                y[b, d, t] = out
            last[b, d] = h
    return (y, last) if return_last_state else y
''',
}


def ss_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general inputs: the block's call (variable B and C, a bias, the softplus, D and z), each option
    alone and off, the last state asked for, fixed B or C or both, a step size large enough to overflow a naive
    softplus, D and z given as lists, dims and state sizes that differ from the batch, and a sequence of length
    0. Each gives the result and the arguments as the caller holds them afterwards."""
    rng = np.random.default_rng(163)
    calls: list[Callable[[], object]] = []
    for batch, dim, state, length, opts in (
            (2, 3, 4, 6, {"D": True, "z": True, "bias": True, "softplus": True}),
            (3, 4, 2, 5, {"softplus": True}),
            (2, 3, 5, 4, {"bias": True}),
            (1, 5, 3, 7, {"D": True, "last": True}),
            (2, 4, 3, 5, {"z": True, "last": True, "softplus": True, "bias": True}),
            (2, 3, 4, 6, {"fixed_B": True, "D": True, "softplus": True}),
            (3, 2, 3, 4, {"fixed_C": True, "z": True, "last": True}),
            (2, 4, 2, 5, {"fixed_B": True, "fixed_C": True, "softplus": True, "last": True}),
            (2, 3, 2, 4, {"large": True, "softplus": True, "D": True, "last": True}),
            (2, 3, 4, 5, {"lists": True, "D": True, "z": True, "bias": True, "softplus": True}),
            (2, 3, 4, 0, {"D": True, "z": True, "last": True, "softplus": True})):
        u = rng.normal(size=(batch, dim, length))
        delta = rng.normal(size=(batch, dim, length)) if opts.get("softplus") else rng.uniform(
            0.05, 0.6, size=(batch, dim, length))
        if opts.get("large"):
            delta[0, 1, 2] = 800.0
            delta[1, 0, 0] = -800.0
        A = -np.exp(rng.normal(scale=0.5, size=(dim, state)))
        B = rng.normal(size=(dim, state)) if opts.get("fixed_B") else rng.normal(size=(batch, state, length))
        C = rng.normal(size=(dim, state)) if opts.get("fixed_C") else rng.normal(size=(batch, state, length))
        kwargs: dict[str, Any] = {}
        if opts.get("D"):
            kwargs["D"] = rng.normal(size=dim)
        if opts.get("z"):
            kwargs["z"] = 2.0 * rng.normal(size=(batch, dim, length))
        if opts.get("bias"):
            kwargs["delta_bias"] = rng.uniform(-3.0, 0.5, size=dim) if opts.get("softplus") else rng.uniform(
                0.0, 0.3, size=dim)
        if opts.get("softplus"):
            kwargs["delta_softplus"] = True
        if opts.get("last"):
            kwargs["return_last_state"] = True
        if opts.get("lists"):
            kwargs = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}

        def call(u=u, delta=delta, A=A, B=B, C=C, kwargs=kwargs) -> object:
            held = [u.copy(), delta.copy(), A.copy(), B.copy(), C.copy()]
            given = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
            return ns["selective_scan"](*held, **given), held, [given[k] for k in sorted(given)]

        calls.append(call)
    return calls


# -- SGDR: cosine annealing with warm restarts (Loshchilov and Hutter 2017) ----------------------------------------

SG_HEAD = '''class CosineWarmRestarts:
    """SGDR (Loshchilov and Hutter 2017): each group's learning rate annealed by a cosine from its base rate down to
    ``eta_min`` over cycles of ``T_0``, ``T_0 * T_mult``, ``T_0 * T_mult ** 2``, ... steps, restarting at the peak
    after each, with an optional linear warm-up of ``warmup_steps`` before the first cycle and the peak decayed by
    ``gamma`` at each restart. ``param_groups`` is the optimiser's list of dicts: a group's base rate is its
    "initial_lr", set from its "lr" when the scheduler is made unless the group has one already (a resumed run),
    and ``step`` writes the new rates into the groups' "lr"."""

    def __init__(self, param_groups, T_0, T_mult=1, eta_min=0.0, warmup_steps=0, gamma=1.0):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected a positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected an integer T_mult >= 1, but got {T_mult}")
        self.param_groups = param_groups
        for group in self.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.T_0 = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.warmup_steps = warmup_steps
        self.gamma = gamma
        self.last_step = 0
        self._apply(self.get_lr(0))

    def _apply(self, lrs):
        for group, lr in zip(self.param_groups, lrs):
            group["lr"] = lr

    def step(self):
        """Advance one step and set each group's learning rate for it."""
        self.last_step += 1
        self._apply(self.get_lr(self.last_step))

    def get_lr(self, step):
'''
SG_BODY = '''        if step < self.warmup_steps:
            return [group["initial_lr"] * step / self.warmup_steps for group in self.param_groups]
        t_cur = step - self.warmup_steps
        if self.T_mult == 1:
            cycle, t_cur = divmod(t_cur, self.T_0)
            t_i = self.T_0
        else:
            cycle, t_i = 0, self.T_0
            while t_cur >= t_i:
                t_cur -= t_i
                t_i *= self.T_mult
                cycle += 1
        cosine = (1.0 + math.cos(math.pi * t_cur / t_i)) / 2.0
        peak = self.gamma ** cycle
        return [self.eta_min + (group["initial_lr"] * peak - self.eta_min) * cosine for group in self.param_groups]
'''
SG_DOC = '''        """The learning rate of each parameter group at ``step`` (an int >= 0, the number of steps taken).

        Settings, read from ``self``: ``T_0`` (the first cycle's length in steps), ``T_mult`` (an int >= 1; cycle i
        lasts ``T_0 * T_mult ** i`` steps), ``eta_min``, ``warmup_steps`` (W >= 0) and ``gamma``; each group's base
        rate is ``self.param_groups[g]["initial_lr"]`` (never its current "lr", which ``step`` overwrites).

        For step < W (the warm-up): ``base * step / W``, rising linearly from 0. From step W on, s = step - W
        locates the cycle: cycle 0 is s in [0, T_0), cycle 1 the next ``T_0 * T_mult`` steps, and so on; with
        T_cur the steps since the start of the current cycle i and T_i its length, the rate is ``eta_min + (base *
        gamma ** i - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``: the decayed peak at each restart, approaching
        eta_min at the end of each cycle. The cycle is found exactly at every step (no floating-point logarithm).

        Returns a list of floats, one per group, in the groups' order. Nothing is changed.
        """
'''
SG_GOLDEN = "\n\n" + SG_HEAD + SG_DOC + SG_BODY
SG_DRIVER = '''"""Fit a linear model with SGD, two parameter groups and SGDR: python train.py"""

import numpy as np

from sched.sgdr import CosineWarmRestarts

STEPS = 300
T_0 = 50


def main():
    rng = np.random.default_rng(0)
    true_w = rng.normal(size=6)
    x_all = rng.normal(size=(512, 6))
    y_all = x_all @ true_w + 0.7 + 0.1 * rng.normal(size=512)
    w = np.zeros(6)
    b = np.zeros(1)
    param_groups = [{"params": w, "lr": 0.05}, {"params": b, "lr": 0.2}]
    scheduler = CosineWarmRestarts(param_groups, T_0=T_0)
    for step in range(1, STEPS + 1):
        idx = rng.choice(len(x_all), size=32, replace=False)
        x, y = x_all[idx], y_all[idx]
        err = x @ w + b[0] - y
        grads = [2.0 * x.T @ err / len(y), np.array([2.0 * err.mean()])]
        for group, grad in zip(param_groups, grads):
            group["params"] -= group["lr"] * grad
        scheduler.step()
        if step % 25 == 0:
            mse = float(np.mean((x_all @ w + b[0] - y_all) ** 2))
            print(f"step {step}: mse {mse:.5f}, lr {param_groups[0]['lr']:.5f} / {param_groups[1]['lr']:.5f}")


if __name__ == "__main__":
    main()
'''

_sg = editor(SG_HEAD, SG_BODY)
_SG_CYCLE = '''        if self.T_mult == 1:
            cycle, t_cur = divmod(t_cur, self.T_0)
            t_i = self.T_0
        else:
            cycle, t_i = 0, self.T_0
            while t_cur >= t_i:
                t_cur -= t_i
                t_i *= self.T_mult
                cycle += 1
'''
SG_WRONG = {
    "base read from the current lr": SG_HEAD + SG_BODY.replace('group["initial_lr"]', 'group["lr"]'),
    "T_mult ignored": _sg(_SG_CYCLE, '''        cycle, t_cur = divmod(t_cur, self.T_0)
        t_i = self.T_0
'''),
    "cycle found by a floating-point log": _sg('''            cycle, t_i = 0, self.T_0
            while t_cur >= t_i:
                t_cur -= t_i
                t_i *= self.T_mult
                cycle += 1
''', '''            cycle = int(math.log(t_cur / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            t_cur = t_cur - self.T_0 * (self.T_mult ** cycle - 1) // (self.T_mult - 1)
            t_i = self.T_0 * self.T_mult ** cycle
'''),
    "warm-up one step ahead": _sg('group["initial_lr"] * step / self.warmup_steps',
                                  'group["initial_lr"] * (step + 1) / self.warmup_steps'),
    "warm-up from eta_min": _sg('group["initial_lr"] * step / self.warmup_steps',
                                'self.eta_min + (group["initial_lr"] - self.eta_min) * step / self.warmup_steps'),
    "gamma decays the floor too": _sg('self.eta_min + (group["initial_lr"] * peak - self.eta_min) * cosine',
                                      'self.eta_min + (group["initial_lr"] - self.eta_min) * peak * cosine'),
    "gamma ignored": _sg("peak = self.gamma ** cycle", "peak = 1.0"),
    "eta_min ignored": _sg('self.eta_min + (group["initial_lr"] * peak - self.eta_min) * cosine',
                           'group["initial_lr"] * peak * cosine'),
    "restarts counted from step 0": _sg("t_cur = step - self.warmup_steps", "t_cur = step"),
    "cosine over one step less": _sg("cosine = (1.0 + math.cos(math.pi * t_cur / t_i)) / 2.0",
                                     "cosine = (1.0 + math.cos(math.pi * t_cur / (t_i - 1))) / 2.0"),
}
SG_RIGHT = {
    "cycle starts listed, numpy cosine": SG_HEAD + '''        import numpy as np

        bases = np.array([g["initial_lr"] for g in self.param_groups], dtype=float)
        W = self.warmup_steps
        if W > 0 and step < W:
            return [float(v) for v in bases * (step / W)]
        s = step - W
        start, length, i = 0, self.T_0, 0
        if self.T_mult == 1:
            i = s // self.T_0
            start = i * self.T_0
        else:
            while start + length <= s:
                start += length
                length *= self.T_mult
                i += 1
        frac = (s - start) / length
        top = bases * self.gamma ** i
        lrs = self.eta_min + 0.5 * (top - self.eta_min) * (1.0 + np.cos(np.pi * frac))
        return [float(v) for v in lrs]
''',
    "a helper for the position, group by group": SG_HEAD + '''        def position(s):
            i, length = 0, self.T_0
            while s >= length:
                s, length, i = s - length, length * self.T_mult, i + 1
            return i, s, length

        out = []
        for group in self.param_groups:
            base = group["initial_lr"]
            if step < self.warmup_steps:
                out.append(base * (step / self.warmup_steps))
                continue
            i, t_cur, t_i = position(step - self.warmup_steps)
            lo = self.eta_min
            hi = base * self.gamma ** i
            out.append(lo + (hi - lo) * 0.5 * (1 + math.cos(math.pi * t_cur / t_i)))
        return out
''',
}


def sg_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a scheduler over general settings: the driver's (T_mult 1), T_mult 2 and 3 with a floor, a warm-up
    with gamma and a floor, T_0 of 1 with T_mult 3 past the start of its sixth cycle (where a floating-point log
    misplaces it), T_mult 1 with a warm-up and a decay, cycles of one step, and groups of other base rates, one of
    them resumed (its "initial_lr" set apart from its "lr"). Each gives every group's rate after the scheduler is
    made and after each step, and then ``get_lr`` at a few steps far apart."""
    calls: list[Callable[[], object]] = []
    for kwargs, steps in (
            ({"T_0": 10}, 35),
            ({"T_0": 5, "T_mult": 2, "eta_min": 0.001}, 60),
            ({"T_0": 3, "T_mult": 3, "eta_min": 0.01, "warmup_steps": 4, "gamma": 0.5}, 50),
            ({"T_0": 1, "T_mult": 3}, 130),
            ({"T_0": 7, "warmup_steps": 5, "gamma": 0.8, "eta_min": 0.002}, 40),
            ({"T_0": 1, "gamma": 0.9}, 12),
            ({"T_0": 4, "T_mult": 2, "warmup_steps": 3, "gamma": 0.7}, 30)):

        def call(kwargs=kwargs, steps=steps) -> object:
            groups = [{"lr": 0.1}, {"lr": 0.02, "momentum": 0.9}, {"lr": 0.05, "initial_lr": 0.3}]
            scheduler = ns["CosineWarmRestarts"](groups, **kwargs)
            trace = [[g["lr"] for g in groups]]
            for _ in range(steps):
                scheduler.step()
                trace.append([g["lr"] for g in groups])
            far = [scheduler.get_lr(s) for s in (0, 2, 121, 999, 4000)]
            return trace, far

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "52-SmoothedSentenceBLEU", "files": {"mteval/__init__.py": "", "mteval/config.py": BL_CONFIG,
     "mteval/bleu.py": '"""Sentence-level BLEU."""\n\nimport math\nfrom collections import Counter\n' + BL_GOLDEN,
     "score_corpus.py": BL_DRIVER},
     "function": "mteval/bleu.py::sentence_bleu", "command": "python score_corpus.py",
     "head": "import math\nfrom collections import Counter\n\n\n", "wrong": BL_WRONG, "right": BL_RIGHT,
     "check": bl_check,
     "gaps": {"counts not clipped": ["min(count, max_ref[gram])"],
              "closest-length ties broken by reference order": ["(abs(len(ref) - hyp_len), len(ref))"],
              "brevity penalty from the shortest reference": ["(abs(len(ref) - hyp_len), len(ref))"],
              "brevity penalty not capped at 1": ["1.0 if hyp_len > ref_len else"],
              "pins epsilon": ["epsilon"],
              "add-one on unigrams too": ['method == "add-one" and n > 1'],
              "exponential decay not compounded": ["zeros += 1", "2 ** zeros * total"],
              "weights from the config ignored": ["weights"],
              "tokenised on single spaces": ["hypothesis.split()", "ref.split()"],
              "short hypothesis not guarded": ["if total <= 0:"]}},
    {"name": "53-RepetitionTypicalProcessor", "files": {"decoding/__init__.py": "", "decoding/processors.py":
     '"""Logits processors applied at each decoding step."""\n\nimport numpy as np\n' + TY_GOLDEN,
     "generate.py": TY_DRIVER},
     "function": "decoding/processors.py::RepetitionTypicalProcessor.__call__", "command": "python generate.py",
     "head": _NP, "wrong": TY_WRONG, "right": TY_RIGHT, "check": ty_check,
     "gaps": {"penalty divides every score": ["np.where(seen < 0, seen * self.penalty, seen / self.penalty)"],
              "penalty compounded for repeated tokens": ["scores[rows, input_ids]"],
              "penalty on every row's tokens": ["rows = np.arange(scores.shape[0])[:, None]",
                                                "scores[rows, input_ids]"],
              "typical mass stops short of typical_p": ["(cumulative < self.typical_p).sum(axis=-1) + 1"],
              "min_tokens_to_keep ignored": ["min_tokens_to_keep"],
              "entropy not guarded against banned tokens": ["np.nansum(probs * log_probs, axis=-1, keepdims=True)"],
              "distance to the entropy not absolute": ["np.abs(-log_probs - entropy)"],
              "pins filter_value": ["filter_value"],
              "scores changed in place": ["np.array(scores, dtype=np.float64)"],
              "filter on the scores before the penalty": ["penalty", "scores[rows, input_ids]"]}},
    {"name": "54-MambaSelectiveScan", "files": {"mamba_np/__init__.py": "", "mamba_np/selective_scan.py":
     '"""The selective scan of Mamba, in numpy."""\n\nimport numpy as np\n' + SS_GOLDEN,
     "mamba_np/block.py": SS_BLOCK, "run_model.py": SS_DRIVER},
     "function": "mamba_np/selective_scan.py::selective_scan", "command": "python run_model.py",
     "head": _NP, "wrong": SS_WRONG, "right": SS_RIGHT, "check": ss_check,
     "gaps": {"delta_bias added after the softplus": ["delta_bias", "delta_softplus"],
              "delta_softplus ignored": ["delta_softplus"],
              "softplus overflows": ["np.logaddexp(0.0, delta)"],
              "B by the exact zero-order hold": ["dt * b_t * u[:, :, t, None]"],
              "output read before the state update": ["ys.append((x * c_t).sum(axis=-1))"],
              "skip added after the gate": ["D", "y = y + np.asarray(D, dtype=np.float64)[None, :, None] * u"],
              "gate by the sigmoid": ["z", "y = y * (z / (1.0 + np.exp(-z)))"],
              "fixed B and C not supported": ["variable_B", "variable_C", "B[None]", "C[None]"],
              "last state not returned": ["return_last_state"],
              "A taken as its log": ["A = np.asarray(A, dtype=np.float64)"]}},
    {"name": "55-SGDRWarmRestarts", "files": {"sched/__init__.py": "", "sched/sgdr.py":
     '"""Learning-rate schedules."""\n\nimport math\n' + SG_GOLDEN, "train.py": SG_DRIVER},
     "function": "sched/sgdr.py::CosineWarmRestarts.get_lr", "command": "python train.py",
     "head": "import math\n\n\n", "wrong": SG_WRONG, "right": SG_RIGHT, "check": sg_check,
     "gaps": {"base read from the current lr": ["initial_lr"],
              "T_mult ignored": ["T_mult"],
              "cycle found by a floating-point log": ["T_mult", "while t_cur >= t_i:"],
              "warm-up one step ahead": ["warmup_steps", 'group["initial_lr"] * step / self.warmup_steps'],
              "warm-up from eta_min": ["warmup_steps", 'group["initial_lr"] * step / self.warmup_steps'],
              "gamma decays the floor too": ["gamma", '(group["initial_lr"] * peak - self.eta_min) * cosine'],
              "gamma ignored": ["gamma"],
              "eta_min ignored": ["eta_min"],
              "restarts counted from step 0": ["warmup_steps", "t_cur = step - self.warmup_steps"],
              "cosine over one step less": ["math.cos(math.pi * t_cur / t_i)"]}},
]
"""The thirteenth fresh held-out tasks."""
