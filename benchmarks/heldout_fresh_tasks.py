"""Three more held-out numpy tasks for ``wrong_answers.py --set heldout`` (and ``--set fresh`` alone), of shapes
that neither the other sets nor any test fixture has: a knowledge-distillation loss over tokens with an
``ignore_index`` (Hinton et al. 2015), a sampler's logits processor with the CTRL repetition penalty, a
temperature and a top-k the driver never turns on (Keskar et al. 2019), and gradient clipping by the global norm
of a list of arrays changed in place, with a norm type the driver never leaves (Pascanu et al. 2013). Written
for this benchmark alone and kept out of tests/: no rule of the recorder is tuned on them.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from corpus_edits import editor

KD_SIG = "def distill_loss(student_logits, teacher_logits, labels, temperature=2.0, alpha=0.5, ignore_index=-100):\n"
KD_BODY = '''    valid = labels != ignore_index
    count = int(valid.sum())
    log_p_s = _log_softmax(student_logits / temperature)
    log_p_t = _log_softmax(teacher_logits / temperature)
    kd = (np.exp(log_p_t) * (log_p_t - log_p_s)).sum(axis=-1)
    safe = np.where(valid, labels, 0)
    log_q = _log_softmax(student_logits)
    ce = -np.take_along_axis(log_q, safe[..., None], axis=-1)[..., 0]
    per_token = alpha * temperature ** 2 * kd + (1.0 - alpha) * ce
    return float((per_token * valid).sum() / max(count, 1))


def _log_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
'''
KD_DOC = '''    """Knowledge-distillation loss (Hinton et al. 2015) of a token classifier. ``student_logits`` and
    ``teacher_logits`` (batch, seq, classes), ``labels`` (batch, seq) holding ``ignore_index`` at padding. Per
    token: ``alpha * temperature**2`` times KL(softmax(teacher / T) || softmax(student / T)) plus ``1 - alpha``
    times the cross-entropy of the student (at temperature 1) against the label. Returns the mean over the tokens
    whose label is not ``ignore_index``, 0.0 when there is none."""
'''
KD_GOLDEN = "\n\n" + KD_SIG + KD_DOC + KD_BODY
KD_DRIVER = '''"""Distil a toy tagger from a toy teacher on padded batches: python distil.py"""

import numpy as np

from kd.losses import distill_loss


def main():
    rng = np.random.default_rng(0)
    classes, seq = 6, 9
    for step in range(3):
        lengths = rng.integers(4, seq + 1, size=4)
        labels = rng.integers(0, classes, size=(4, seq))
        labels[np.arange(seq)[None, :] >= lengths[:, None]] = -100
        teacher = rng.normal(scale=2.0, size=(4, seq, classes))
        student = teacher + rng.normal(size=teacher.shape)
        print(f"step {step}: loss {distill_loss(student, teacher, labels):.4f}")


if __name__ == "__main__":
    main()
'''


_kd = editor(KD_SIG, KD_BODY)


KD_WRONG = {
    "no T squared": _kd("alpha * temperature ** 2 * kd", "alpha * kd"),
    "KL reversed": _kd("(np.exp(log_p_t) * (log_p_t - log_p_s))", "(np.exp(log_p_s) * (log_p_s - log_p_t))"),
    "teacher not softened": _kd("_log_softmax(teacher_logits / temperature)", "_log_softmax(teacher_logits)"),
    "mean over every token": _kd("/ max(count, 1))", "/ labels.size)"),
    "alpha on the hard loss": _kd("alpha * temperature ** 2 * kd + (1.0 - alpha) * ce",
                                  "(1.0 - alpha) * temperature ** 2 * kd + alpha * ce"),
    "hard loss at the temperature": _kd("log_q = _log_softmax(student_logits)",
                                        "log_q = _log_softmax(student_logits / temperature)"),
    "padding in the distillation term": _kd("return float((per_token * valid).sum() / max(count, 1))",
                                            "return float((alpha * temperature ** 2 * kd).sum() / max(count, 1)"
                                            " + ((1.0 - alpha) * ce * valid).sum() / max(count, 1))"),
    "no guard for an all-padding batch": _kd("/ max(count, 1))", "/ count)"),
}
KD_RIGHT = {
    "token by token": KD_SIG + '''    total, n = 0.0, 0
    for s_row, t_row, y_row in zip(student_logits, teacher_logits, labels):
        for s, t, y in zip(s_row, t_row, y_row):
            if y == ignore_index:
                continue
            p_t = np.exp(t / temperature - np.logaddexp.reduce(t / temperature))
            log_p_s = s / temperature - np.logaddexp.reduce(s / temperature)
            kl = float(np.sum(p_t * (np.log(p_t) - log_p_s)))
            ce = float(np.logaddexp.reduce(s) - s[y])
            total += alpha * temperature * temperature * kl + (1 - alpha) * ce
            n += 1
    return total / n if n else 0.0
''',
    "boolean selection": KD_SIG + '''    keep = labels != ignore_index
    if not keep.any():
        return 0.0
    s, t, y = student_logits[keep], teacher_logits[keep], labels[keep]

    def log_softmax(z):
        z = z - z.max(axis=1, keepdims=True)
        return z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))

    teacher_lp = log_softmax(t / temperature)
    soft = np.sum(np.exp(teacher_lp) * (teacher_lp - log_softmax(s / temperature)), axis=1)
    hard = -log_softmax(s)[np.arange(len(y)), y]
    return float(np.mean(alpha * soft * temperature ** 2 + (1 - alpha) * hard))
''',
}


def kd_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``distill_loss`` on general inputs: other temperatures and alphas, another ignore index, rows of
    padding only, a batch of padding only."""
    rng = np.random.default_rng(46)
    f = ns["distill_loss"]
    calls = []
    for temp, alpha, ignore, pad_rate in ((2.0, 0.5, -100, 0.3), (1.0, 0.9, -100, 0.0), (4.0, 0.2, -1, 0.5),
                                          (0.5, 0.0, -100, 1.0), (3.0, 1.0, 5, 0.2)):
        labels = rng.integers(0, 5, size=(3, 4))
        labels[rng.random(labels.shape) < pad_rate] = ignore
        teacher = rng.normal(scale=2.0, size=(3, 4, 5))
        student = rng.normal(size=(3, 4, 5))
        calls.append(lambda a=(student, teacher, labels), k=(temp, alpha, ignore): f(*a, *k))
    return calls


RP_SIG = "def process_logits(logits, prev_tokens, penalty=1.2, temperature=0.8, top_k=0):\n"
RP_BODY = '''    out = np.array(logits, dtype=np.float64)
    for row in range(out.shape[0]):
        seen = np.unique(prev_tokens[row])
        picked = out[row, seen]
        out[row, seen] = np.where(picked > 0, picked / penalty, picked * penalty)
    out = out / temperature
    if top_k > 0:
        kth = np.sort(out, axis=-1)[:, -top_k][:, None]
        out = np.where(out < kth, -np.inf, out)
    return out
'''
RP_DOC = '''    """Next-token logits (batch, vocab) made ready for sampling: the CTRL repetition penalty
    (Keskar et al. 2019) on each token id that occurs in its row of ``prev_tokens`` (batch, steps), once
    however often it occurred (a positive logit divided by ``penalty``, a negative one multiplied by it); then
    divided by ``temperature``; then, when ``top_k > 0``, every logit below its row's ``top_k``-th largest set
    to -inf. Returns a new array."""
'''
RP_GOLDEN = "\n\n" + RP_SIG + RP_DOC + RP_BODY
RP_DRIVER = '''"""Sample short continuations from a toy bigram model: python generate.py"""

import numpy as np

from sampler.logits import process_logits


def main():
    rng = np.random.default_rng(0)
    vocab, batch = 12, 3
    table = rng.normal(scale=1.5, size=(vocab, vocab))
    tokens = rng.integers(0, vocab, size=(batch, 1))
    for _ in range(6):
        logits = table[tokens[:, -1]]
        scores = process_logits(logits, tokens)
        probs = np.exp(scores - scores.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        nxt = np.array([rng.choice(vocab, p=p) for p in probs])
        tokens = np.concatenate([tokens, nxt[:, None]], axis=1)
    print(tokens)


if __name__ == "__main__":
    main()
'''


_rp = editor(RP_SIG, RP_BODY)


RP_WRONG = {
    "penalty per occurrence": _rp('''        seen = np.unique(prev_tokens[row])
        picked = out[row, seen]
        out[row, seen] = np.where(picked > 0, picked / penalty, picked * penalty)
''', '''        for tok in prev_tokens[row]:
            out[row, tok] = out[row, tok] / penalty if out[row, tok] > 0 else out[row, tok] * penalty
'''),
    "sign ignored": _rp("np.where(picked > 0, picked / penalty, picked * penalty)", "picked / penalty"),
    "every row's tokens": _rp("seen = np.unique(prev_tokens[row])", "seen = np.unique(prev_tokens)"),
    "top_k ignored": _rp('''    if top_k > 0:
        kth = np.sort(out, axis=-1)[:, -top_k][:, None]
        out = np.where(out < kth, -np.inf, out)
''', ""),
    "keeps one too many": _rp("[:, -top_k][:, None]", "[:, -top_k - 1][:, None]"),
    "temperature multiplies": _rp("out = out / temperature", "out = out * temperature"),
    "pins penalty": RP_SIG + "    penalty = 1.2\n" + RP_BODY,
}
RP_RIGHT = {
    "mask of seen tokens": RP_SIG + '''    scores = np.asarray(logits, dtype=float).copy()
    hit = np.zeros(scores.shape, dtype=bool)
    hit[np.arange(scores.shape[0])[:, None], prev_tokens] = True
    scores = np.where(hit & (scores > 0), scores / penalty, np.where(hit, scores * penalty, scores))
    scores /= temperature
    if top_k <= 0:
        return scores
    threshold = np.partition(scores, scores.shape[1] - top_k, axis=1)[:, scores.shape[1] - top_k]
    scores[scores < threshold[:, None]] = -np.inf
    return scores
''',
    "row by row with a set": RP_SIG + '''    rows = []
    for row_logits, history in zip(logits, prev_tokens):
        row = [float(x) for x in row_logits]
        for tok in set(int(t) for t in history):
            row[tok] = row[tok] / penalty if row[tok] > 0 else row[tok] * penalty
        row = [x / temperature for x in row]
        if top_k > 0:
            cut = sorted(row, reverse=True)[top_k - 1]
            row = [x if x >= cut else -np.inf for x in row]
        rows.append(row)
    return np.array(rows)
''',
}


def rp_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``process_logits`` on general inputs: repeated tokens, other penalties and temperatures, top-k."""
    rng = np.random.default_rng(46)
    f = ns["process_logits"]
    calls = []
    for penalty, temp, k in ((1.2, 0.8, 0), (2.0, 1.0, 3), (1.5, 0.5, 1), (1.3, 2.0, 0)):
        logits = rng.normal(scale=2.0, size=(3, 8))
        prev = rng.integers(0, 4, size=(3, 6))
        calls.append(lambda a=(logits, prev), kw=(penalty, temp, k): f(*a, *kw))
    return calls


CG_SIG = "def clip_grad_norm(grads, max_norm, norm_type=2.0, eps=1e-6):\n"
CG_BODY = '''    if norm_type == float("inf"):
        total = max(float(np.abs(g).max()) for g in grads)
    else:
        total = float(sum((np.abs(g) ** norm_type).sum() for g in grads) ** (1.0 / norm_type))
    coef = max_norm / (total + eps)
    if coef < 1.0:
        for g in grads:
            g *= coef
    return total
'''
CG_DOC = '''    """Clip gradients by their global norm (Pascanu et al. 2013): ``grads`` is a list of float arrays,
    changed in place. ``total`` is the ``norm_type``-norm of all their entries together (the largest absolute entry for
    ``norm_type=inf``); when ``max_norm / (total + eps)`` is below 1, every array is multiplied by it. Returns
    ``total``, the norm before clipping."""
'''
CG_GOLDEN = "\n\n" + CG_SIG + CG_DOC + CG_BODY
CG_DRIVER = '''"""Train a toy two-layer regressor by SGD with clipped gradients: python train.py"""

import numpy as np

from optim.clip import clip_grad_norm


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 4))
    y = np.sin(x @ rng.normal(size=4))
    w1, b1, w2 = rng.normal(size=(4, 8)), np.zeros(8), rng.normal(size=8)
    for step in range(5):
        h = np.tanh(x @ w1 + b1)
        err = h @ w2 - y
        g_w2 = h.T @ err / len(y)
        g_h = np.outer(err, w2) * (1 - h ** 2) / len(y)
        grads = [x.T @ g_h, g_h.sum(axis=0), g_w2]
        norm = clip_grad_norm(grads, max_norm=0.5)
        for p, g in zip((w1, b1, w2), grads):
            p -= 0.5 * g
        print(f"step {step}: grad norm {norm:.4f}, loss {np.mean(err ** 2):.4f}")


if __name__ == "__main__":
    main()
'''


_cg = editor(CG_SIG, CG_BODY)


CG_WRONG = {
    "each array clipped alone": CG_SIG + '''    total = float(sum((np.abs(g) ** norm_type).sum() for g in grads)
                  ** (1.0 / norm_type))
    for g in grads:
        own = float((np.abs(g) ** norm_type).sum() ** (1.0 / norm_type))
        coef = max_norm / (own + eps)
        if coef < 1.0:
            g *= coef
    return total
''',
    "always scaled": _cg("    if coef < 1.0:\n        for g in grads:\n            g *= coef\n",
                         "    for g in grads:\n        g *= coef\n"),
    "clipped norm returned": _cg("    return total\n", "    return min(total, max_norm)\n"),
    "norm type ignored": _cg("(np.abs(g) ** norm_type).sum() for g in grads) ** (1.0 / norm_type)",
                             "(g * g).sum() for g in grads) ** 0.5"),
    "inf norm as a sum": _cg("total = max(float(np.abs(g).max()) for g in grads)",
                             "total = float(sum(np.abs(g).sum() for g in grads))"),
    "not in place": _cg("        for g in grads:\n            g *= coef\n",
                        "        grads = [g * coef for g in grads]\n"),
    "no root": _cg(" ** (1.0 / norm_type))", ")"),
}
CG_RIGHT = {
    "one flat vector": CG_SIG + '''    flat = np.concatenate([np.ravel(g) for g in grads])
    total = float(np.linalg.norm(flat, ord=norm_type))
    scale = max_norm / (total + eps)
    if scale < 1:
        for g in grads:
            np.multiply(g, scale, out=g)
    return total
''',
    "math and a generator": "import math\n\n\n" + CG_SIG + '''    if math.isinf(norm_type):
        total = max(np.max(np.abs(g)).item() for g in grads)
    else:
        total = math.fsum(float(np.sum(np.power(np.abs(g), norm_type))) for g in grads) ** (1 / norm_type)
    if total + eps > max_norm:
        for g in grads:
            g[...] = g * (max_norm / (total + eps))
    return total
''',
}


def cg_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``clip_grad_norm`` on general inputs (norms above and below the limit, norm types 1, 2, 3 and
    inf); each returns the norm and the arrays after the call."""
    rng = np.random.default_rng(46)
    f = ns["clip_grad_norm"]
    calls = []
    for max_norm, norm_type, scale in ((1.0, 2.0, 3.0), (5.0, 2.0, 0.5), (0.5, 1.0, 1.0), (2.0, float("inf"), 2.0),
                                       (0.3, 3.0, 1.0)):
        grads = [rng.normal(scale=scale, size=(3, 4)), rng.normal(scale=scale, size=4)]

        def call(gs=grads, m=max_norm, p=norm_type) -> object:
            mine = [g.copy() for g in gs]
            return f(mine, m, p), mine

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "15-DistillKL", "files": {"kd/__init__.py": "", "kd/losses.py":
     '"""Distillation losses."""\n\nimport numpy as np\n' + KD_GOLDEN, "distil.py": KD_DRIVER},
     "function": "kd/losses.py::distill_loss", "command": "python distil.py", "head": _NP, "wrong": KD_WRONG,
     "right": KD_RIGHT, "check": kd_check,
     "gaps": {"no T squared": ["temperature ** 2"], "KL reversed": ["log_p_t - log_p_s"],
              "teacher not softened": ["teacher_logits / temperature"], "mean over every token": ["max(count, 1)"],
              "alpha on the hard loss": ["alpha"], "hard loss at the temperature": ["_log_softmax(student_logits)"],
              "padding in the distillation term": ["per_token * valid"],
              "no guard for an all-padding batch": ["max(count, 1)"]}},
    {"name": "16-RepetitionPenalty", "files": {"sampler/__init__.py": "", "sampler/logits.py":
     '"""Logits processors."""\n\nimport numpy as np\n' + RP_GOLDEN, "generate.py": RP_DRIVER},
     "function": "sampler/logits.py::process_logits", "command": "python generate.py", "head": _NP,
     "wrong": RP_WRONG, "right": RP_RIGHT, "check": rp_check,
     "gaps": {"penalty per occurrence": ["np.unique(prev_tokens[row])"], "sign ignored": ["picked > 0"],
              "every row's tokens": ["prev_tokens[row]"], "top_k ignored": ["top_k"],
              "keeps one too many": ["top_k"], "temperature multiplies": ["temperature"], "pins penalty": ["penalty"]}},
    {"name": "17-ClipGradNorm", "files": {"optim/__init__.py": "", "optim/clip.py":
     '"""Gradient clipping."""\n\nimport numpy as np\n' + CG_GOLDEN, "train.py": CG_DRIVER},
     "function": "optim/clip.py::clip_grad_norm", "command": "python train.py", "head": _NP, "wrong": CG_WRONG,
     "right": CG_RIGHT, "check": cg_check,
     "gaps": {"each array clipped alone": ["for g in grads"], "always scaled": ["coef < 1.0"],
              "clipped norm returned": ["return total"], "norm type ignored": ["norm_type"],
              "inf norm as a sum": ["norm_type", "np.abs(g).max()"], "not in place": ["g *= coef"],
              "no root": ["1.0 / norm_type"]}},
]
"""The fresh held-out tasks."""
