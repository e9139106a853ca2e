"""An eleventh held-out set for ``wrong_answers.py --set fresh10``: four numpy tasks of shapes that no other set nor
any test fixture has. The first is dynamic loss scaling for float16 training (Micikevicius et al. 2018) as a
scaler's ``update`` that reads and changes its own state: an overflow (an inf or a NaN in any gradient) skips the
step and backs the scale off, floored at ``min_scale``, after ``hysteresis`` overflows; a finite step divides the
gradients by the scale in place and, after ``growth_interval`` finite steps in a row, grows the scale, capped at
``max_scale``; the driver trains a linear model with gradients cast through float16, one call per step, so
overflows are all infs, the hysteresis stays 1 and neither bound is reached. The second is the CTC loss (Graves,
Fernandez, Gomez and Schmidhuber 2006): the forward variable over the blank-extended label sequence in log space,
the skip transition only between different labels, the last label or the last blank as the end, padded batches by
input and target lengths, a blank index, a "mean" reduction over target lengths, "sum" and "none", and
``zero_infinity`` for alignments that cannot fit; the driver evaluates a toy frame classifier on short utterances
with blank 0, the mean, and every alignment feasible. The third is DINO's loss (Caron et al. 2021) as a module's
``__call__`` reading ``self.*``: the teacher's global crops centred by a running centre and sharpened by a
temperature warmed up linearly over epochs, the student's crops at their own temperature, the cross-entropy over
every pair of a teacher crop and a different student crop, and the centre updated afterwards by momentum; the
driver pretrains a toy head for a few epochs, all inside the warm-up, with two global crops. The fourth is the
acceptance rule of speculative decoding (Leviathan, Kalman and Matias 2023; Chen et al. 2023): draft tokens kept
while a uniform draw falls below p/q, the next token drawn from the normalised residual max(p - q, 0) at the first
rejection or from the target's extra row when all are kept, by inverse CDF from a given draw, and a greedy mode;
the driver samples from a toy bigram target with a noisier draft, four tokens a round, never greedy. Written before
its first run, and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from corpus_edits import editor

# -- Dynamic loss scaling for mixed-precision training (Micikevicius et al. 2018) ---------------------------------

LS_HEAD = '''class DynamicLossScaler:
    """Loss scaling for float16 training: the loss is multiplied by ``scale`` before the backward pass so that
    small gradients survive in float16, and ``update`` unscales the gradients and adapts the scale.
    ``good_steps`` counts the finite steps since the last overflow or growth, ``overflows_left`` the overflows
    still tolerated before the next back-off, and ``skipped`` the steps skipped so far."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=200,
                 min_scale=1.0, max_scale=2.0 ** 24, hysteresis=1):
        self.scale = float(init_scale)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.min_scale = min_scale
        self.max_scale = max_scale
        self.hysteresis = hysteresis
        self.good_steps = 0
        self.overflows_left = hysteresis
        self.skipped = 0

    def update(self, grads):
'''
LS_BODY = '''        overflow = False
        for g in grads:
            if not np.all(np.isfinite(g)):
                overflow = True
                break
        if overflow:
            self.skipped += 1
            self.good_steps = 0
            self.overflows_left -= 1
            if self.overflows_left <= 0:
                self.scale = max(self.scale * self.backoff_factor, self.min_scale)
                self.overflows_left = self.hysteresis
            return False
        for g in grads:
            g /= self.scale
        self.good_steps += 1
        if self.good_steps >= self.growth_interval:
            self.scale = min(self.scale * self.growth_factor, self.max_scale)
            self.good_steps = 0
            self.overflows_left = self.hysteresis
        return True
'''
LS_DOC = '''        """Check one step's gradients, computed from the loss times ``self.scale``, and adapt the scale.

        ``grads`` is a list of one or more float arrays. The step overflowed when any of them holds an inf or a
        NaN. Then the optimiser step is to be skipped: the gradients are left exactly as they are, ``skipped``
        grows by one, ``good_steps`` is reset to 0 and ``overflows_left`` drops by one; when it reaches 0 the
        scale backs off, ``scale = max(scale * backoff_factor, min_scale)``, and ``overflows_left`` is reset to
        ``hysteresis`` (so with the default hysteresis of 1 every overflow backs off, and with h every h-th
        overflow since the last back-off or growth does). Returns False.

        Otherwise every gradient is divided by the scale in force at the start of the call, in place (the very
        arrays of ``grads``, which the optimiser reads next), ``good_steps`` grows by one, and when it reaches
        ``growth_interval`` (>= 1) the scale grows, ``scale = min(scale * growth_factor, max_scale)``, with
        ``good_steps`` reset to 0 and ``overflows_left`` to ``hysteresis``. Returns True."""
'''
LS_GOLDEN = "\n\n" + LS_HEAD + LS_DOC + LS_BODY
LS_DRIVER = '''"""Fit a linear model with float16 gradients and dynamic loss scaling: python train_fp16.py"""

import numpy as np

from mixedprec.scaler import DynamicLossScaler


def to_half(x):
    """What a float16 backward pass would hold: values past float16's range overflow to inf."""
    with np.errstate(over="ignore"):
        return x.astype(np.float16).astype(np.float64)


def main():
    rng = np.random.default_rng(0)
    true_w = rng.normal(scale=2.0, size=(8, 2))
    x_all = rng.normal(size=(1024, 8))
    y_all = x_all @ true_w + 0.1 * rng.normal(size=(1024, 2))
    w = np.zeros((8, 2))
    b = np.zeros(2)
    scaler = DynamicLossScaler()
    lr = 0.05
    for step in range(1, 701):
        idx = rng.choice(len(x_all), size=16, replace=False)
        x, y = x_all[idx], y_all[idx]
        err = x @ w + b - y
        loss = float(np.mean(err ** 2))
        scaled_err = to_half(2.0 * err / err.size * scaler.scale)
        grads = [to_half(x.T @ scaled_err), to_half(scaled_err.sum(axis=0))]
        scale_used = scaler.scale
        if scaler.update(grads):
            w -= lr * grads[0]
            b -= lr * grads[1]
        else:
            print(f"step {step}: overflow at scale {scale_used:g}, now {scaler.scale:g}")
        if step % 100 == 0:
            print(f"step {step}: mse {loss:.5f}, scale {scaler.scale:g}, skipped {scaler.skipped}")


if __name__ == "__main__":
    main()
'''

_ls = editor(LS_HEAD, LS_BODY)

LS_WRONG = {
    "NaN not taken for an overflow": _ls("if not np.all(np.isfinite(g)):", "if np.any(np.isinf(g)):"),
    "finite-step count kept through an overflow": _ls('''            self.skipped += 1
            self.good_steps = 0
''', '''            self.skipped += 1
'''),
    "gradients rebound, not unscaled": _ls('''        for g in grads:
            g /= self.scale
''', '''        for g in grads:
            g = g / self.scale
'''),
    "no floor at min_scale": _ls("self.scale = max(self.scale * self.backoff_factor, self.min_scale)",
                                 "self.scale = self.scale * self.backoff_factor"),
    "no cap at max_scale": _ls("self.scale = min(self.scale * self.growth_factor, self.max_scale)",
                               "self.scale = self.scale * self.growth_factor"),
    "hysteresis ignored": _ls('''            self.overflows_left -= 1
            if self.overflows_left <= 0:
                self.scale = max(self.scale * self.backoff_factor, self.min_scale)
                self.overflows_left = self.hysteresis
''', '''            self.scale = max(self.scale * self.backoff_factor, self.min_scale)
'''),
    "tolerance not restored by a growth": _ls('''            self.good_steps = 0
            self.overflows_left = self.hysteresis
        return True
''', '''            self.good_steps = 0
        return True
'''),
    "grows one step late": _ls("if self.good_steps >= self.growth_interval:",
                               "if self.good_steps > self.growth_interval:"),
    "gradients unscaled before the check": _ls('''        overflow = False
        for g in grads:
            if not np.all(np.isfinite(g)):
''', '''        overflow = False
        for g in grads:
            g /= self.scale
        for g in grads:
            if not np.all(np.isfinite(g)):
'''),
}
LS_RIGHT = {
    "one flat finiteness test, reciprocal": LS_HEAD + '''        flat = np.concatenate([np.ravel(g) for g in grads])
        if np.isfinite(flat).all():
            inv = 1.0 / self.scale
            for g in grads:
                g *= inv
            self.good_steps = self.good_steps + 1
            if self.good_steps == self.growth_interval:
                self.good_steps = 0
                self.overflows_left = self.hysteresis
                grown = self.scale * self.growth_factor
                self.scale = self.max_scale if grown > self.max_scale else grown
            return True
        self.skipped = self.skipped + 1
        self.good_steps = 0
        self.overflows_left = self.overflows_left - 1
        if self.overflows_left > 0:
            return False
        self.overflows_left = self.hysteresis
        shrunk = self.scale * self.backoff_factor
        self.scale = self.min_scale if shrunk < self.min_scale else shrunk
        return False
''',
    "helpers for the two outcomes, np.divide with out": LS_HEAD + '''        def overflowed(arrays):
            return any(bool(np.isnan(a).any() or np.isinf(a).any()) for a in arrays)

        def back_off():
            self.skipped += 1
            self.good_steps = 0
            self.overflows_left -= 1
            if self.overflows_left == 0 or self.overflows_left < 0:
                self.scale = float(np.maximum(self.scale * self.backoff_factor, self.min_scale))
                self.overflows_left = self.hysteresis

        def accept():
            current = self.scale
            for a in grads:
                np.divide(a, current, out=a)
            self.good_steps += 1
            if self.good_steps >= self.growth_interval:
                self.scale = float(np.minimum(current * self.growth_factor, self.max_scale))
                self.good_steps = 0
                self.overflows_left = self.hysteresis

        if overflowed(grads):
            back_off()
            return False
        accept()
        return True
''',
}


def ls_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a scaler over a sequence of gradient lists on general settings: infs and NaNs in one array of
    several, an overflow in the middle of a run of finite steps, hysteresis 2 and 3, a short growth interval
    that is reached more than once, scales that hit ``min_scale`` and ``max_scale``, other factors and a scale
    that is not a power of two. Each gives, after every call, what it returned, the scale, the three counters
    and the gradients as the caller holds them."""
    rng = np.random.default_rng(107)
    inf, nan = np.inf, np.nan
    calls: list[Callable[[], object]] = []
    for kwargs, pattern in (
            ({}, "ffoffoff"),
            ({"growth_interval": 3}, "fffffffofff"),
            ({"growth_interval": 2, "hysteresis": 2}, "ofooffoooff"),
            ({"init_scale": 8.0, "min_scale": 2.0, "hysteresis": 1}, "ooooff"),
            ({"init_scale": 2.0 ** 22, "max_scale": 2.0 ** 23, "growth_interval": 1}, "fffoff"),
            ({"init_scale": 1000.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 2,
              "hysteresis": 3}, "ffnoofnfooof"),
            ({"init_scale": 6.0, "min_scale": 0.5, "backoff_factor": 0.3}, "nnnnff")):
        seq = []
        for kind in pattern:
            grads = [rng.normal(size=(3, 4)) * 50.0, rng.normal(size=5), rng.normal(size=(2, 2, 2))]
            if kind == "o":
                grads[1][2] = inf if rng.random() < 0.5 else -inf
            elif kind == "n":
                grads[2][1, 0, 1] = nan
            seq.append(grads)

        def call(kwargs=kwargs, seq=seq) -> object:
            scaler = ns["DynamicLossScaler"](**kwargs)
            trace = []
            for grads in seq:
                held = [g.copy() for g in grads]
                ok = scaler.update(held)
                trace.append((bool(ok), scaler.scale, scaler.good_steps, scaler.overflows_left, scaler.skipped,
                              [h.copy() for h in held]))
            return trace

        calls.append(call)
    return calls


# -- CTC loss: the forward variable (Graves, Fernandez, Gomez and Schmidhuber 2006) -------------------------------

CT_SIG = ('def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", '
          'zero_infinity=False):\n')
CT_BODY = '''    T, N, C = log_probs.shape
    losses = np.zeros(N)
    for n in range(N):
        frames = int(input_lengths[n])
        L = int(target_lengths[n])
        labels = np.asarray(targets[n][:L], dtype=int)
        ext = np.full(2 * L + 1, blank, dtype=int)
        ext[1::2] = labels
        skip = np.zeros(2 * L + 1, dtype=bool)
        skip[3::2] = labels[1:] != labels[:-1]
        alpha = np.full(2 * L + 1, -np.inf)
        alpha[0] = log_probs[0, n, blank]
        if L > 0:
            alpha[1] = log_probs[0, n, ext[1]]
        for t in range(1, frames):
            one = np.full_like(alpha, -np.inf)
            one[1:] = alpha[:-1]
            two = np.full_like(alpha, -np.inf)
            two[2:] = alpha[:-2]
            two = np.where(skip, two, -np.inf)
            alpha = np.logaddexp(np.logaddexp(alpha, one), two) + log_probs[t, n, ext]
        ll = alpha[-1] if L == 0 else np.logaddexp(alpha[-1], alpha[-2])
        losses[n] = -ll
    if zero_infinity:
        losses = np.where(np.isinf(losses), 0.0, losses)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return float(losses.sum())
    if reduction == "mean":
        return float(np.mean(losses / np.maximum(np.asarray(target_lengths), 1)))
    raise ValueError(f"unknown reduction {reduction!r}")
'''
CT_DOC = '''    """Connectionist temporal classification loss: minus the log of the total probability of every frame
    alignment of each label sequence.

    ``log_probs`` (T, N, C): per-frame log-probabilities (log-softmax outputs) of N sequences over C classes, one
    of them ``blank``. ``targets`` (N, S): integer labels, padded; only the first ``target_lengths[n]`` (0..S)
    entries of row n count, the rest may hold anything. ``input_lengths[n]`` (1..T): the frames of sequence n;
    later frames are ignored. Labels are never the blank.

    For a sequence with labels l_1..l_L, the extended sequence is blank, l_1, blank, l_2, ..., l_L, blank (2L + 1
    states). The forward variable, in log space: at frame 0 only state 0 (the blank) and state 1 (l_1, when
    L > 0) are reachable, with that frame's log-probabilities; at each later frame, state s is reached from states
    s and s - 1 of the frame before, and also from s - 2 when state s is a label that differs from the label at
    s - 2 (never into a blank, never between two equal labels), plus the frame's log-probability of state s's
    class. The sequence's log-likelihood is the log-sum of the last frame's two final states, the last label and
    the last blank (the blank alone when L = 0); its loss is minus that, +inf when no alignment fits (too few
    frames). Everything is done in log space, so long inputs do not underflow.

    With ``zero_infinity``, infinite losses become 0. ``reduction``: "none" gives the (N,) losses, "sum" their sum,
    "mean" the mean over the batch of each loss divided by its target length (at least 1); anything else raises
    ValueError. No argument is changed.
    """
'''
CT_GOLDEN = "\n\n" + CT_SIG + CT_DOC + CT_BODY
CT_DRIVER = '''"""Evaluate a toy frame classifier with the CTC loss and greedy decoding: python evaluate_ctc.py"""

import numpy as np

from speech.ctc import ctc_loss

NUM_CLASSES = 6  # blank (0) and five letters
FRAMES = 24


def log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def make_batch(rng, batch_size=4):
    """Utterances whose frames sweep through their labels, each label held for a few frames, blanks between."""
    lengths = rng.integers(2, 6, size=batch_size)
    targets = np.zeros((batch_size, lengths.max()), dtype=int)
    frame_labels = np.zeros((FRAMES, batch_size), dtype=int)
    input_lengths = np.zeros(batch_size, dtype=int)
    for n, length in enumerate(lengths):
        labels = rng.integers(1, NUM_CLASSES, size=length)
        targets[n, :length] = labels
        path = []
        for label in labels:
            path += [0] * int(rng.integers(0, 2)) + [int(label)] * int(rng.integers(2, 4))
        path += [0] * int(rng.integers(1, 3))
        input_lengths[n] = len(path)
        frame_labels[:len(path), n] = path
    return frame_labels, targets, input_lengths, lengths


def greedy_decode(log_probs, input_lengths):
    best = log_probs.argmax(axis=-1)
    out = []
    for n, length in enumerate(input_lengths):
        seq = best[:length, n]
        keep = np.concatenate(([True], seq[1:] != seq[:-1])) & (seq != 0)
        out.append(seq[keep].tolist())
    return out


def main():
    rng = np.random.default_rng(0)
    for checkpoint, sharpness in enumerate((0.5, 1.5, 3.0)):
        losses, exact = [], 0
        for _ in range(3):
            frame_labels, targets, input_lengths, target_lengths = make_batch(rng)
            logits = sharpness * np.eye(NUM_CLASSES)[frame_labels] + rng.normal(size=(FRAMES, 4, NUM_CLASSES))
            log_probs = log_softmax(logits)
            losses.append(ctc_loss(log_probs, targets, input_lengths, target_lengths))
            decoded = greedy_decode(log_probs, input_lengths)
            exact += sum(d == t[:k].tolist() for d, t, k in zip(decoded, targets, target_lengths))
        print(f"checkpoint {checkpoint}: ctc loss per label {np.mean(losses):.4f}, exact transcripts {exact}/12")


if __name__ == "__main__":
    main()
'''

_ct = editor(CT_SIG, CT_BODY)
_CT_START = '''        ext = np.full(2 * L + 1, blank, dtype=int)
        ext[1::2] = labels
        skip = np.zeros(2 * L + 1, dtype=bool)
        skip[3::2] = labels[1:] != labels[:-1]
        alpha = np.full(2 * L + 1, -np.inf)
        alpha[0] = log_probs[0, n, blank]
'''
_CT_RECURSION = '''        alpha = np.full(2 * L + 1, -np.inf)
        alpha[0] = log_probs[0, n, blank]
        if L > 0:
            alpha[1] = log_probs[0, n, ext[1]]
        for t in range(1, frames):
            one = np.full_like(alpha, -np.inf)
            one[1:] = alpha[:-1]
            two = np.full_like(alpha, -np.inf)
            two[2:] = alpha[:-2]
            two = np.where(skip, two, -np.inf)
            alpha = np.logaddexp(np.logaddexp(alpha, one), two) + log_probs[t, n, ext]
        ll = alpha[-1] if L == 0 else np.logaddexp(alpha[-1], alpha[-2])
'''

CT_WRONG = {
    "skip allowed between equal labels": _ct("skip[3::2] = labels[1:] != labels[:-1]", "skip[3::2] = True"),
    "input lengths ignored": _ct("frames = int(input_lengths[n])", "frames = T"),
    "ends on the last blank only": _ct("ll = alpha[-1] if L == 0 else np.logaddexp(alpha[-1], alpha[-2])",
                                       "ll = alpha[-1]"),
    "mean not over target lengths": _ct("return float(np.mean(losses / np.maximum(np.asarray(target_lengths), 1)))",
                                        "return float(np.mean(losses))"),
    "empty target divides by zero": _ct("np.maximum(np.asarray(target_lengths), 1)", "np.asarray(target_lengths)"),
    "zero_infinity ignored": _ct('''    if zero_infinity:
        losses = np.where(np.isinf(losses), 0.0, losses)
''', ""),
    "pins the blank to class 0": _ct(_CT_START, _CT_START.replace("blank", "0")),
    "probabilities instead of log space": _ct(_CT_RECURSION, '''        probs = np.exp(log_probs[:, n, :])
        alpha = np.zeros(2 * L + 1)
        alpha[0] = probs[0, blank]
        if L > 0:
            alpha[1] = probs[0, ext[1]]
        for t in range(1, frames):
            one = np.zeros_like(alpha)
            one[1:] = alpha[:-1]
            two = np.zeros_like(alpha)
            two[2:] = alpha[:-2]
            two = np.where(skip, two, 0.0)
            alpha = (alpha + one + two) * probs[t, ext]
        ll = np.log(alpha[-1] if L == 0 else alpha[-1] + alpha[-2])
'''),
    "padding told apart by the blank": _ct('''        L = int(target_lengths[n])
        labels = np.asarray(targets[n][:L], dtype=int)
''', '''        labels = np.asarray(targets[n], dtype=int)
        labels = labels[labels != blank]
        L = len(labels)
'''),
}
CT_RIGHT = {
    "state by state with a scalar log-sum": CT_SIG + '''    def lse(*xs):
        top = max(xs)
        if top == -math.inf:
            return -math.inf
        return top + math.log(sum(math.exp(x - top) for x in xs))

    per_seq = []
    for n in range(log_probs.shape[1]):
        length = int(target_lengths[n])
        seq = [int(v) for v in targets[n][:length]]
        states = [blank]
        for c in seq:
            states += [c, blank]
        S = len(states)
        prev = [-math.inf] * S
        prev[0] = float(log_probs[0, n, blank])
        if S > 1:
            prev[1] = float(log_probs[0, n, states[1]])
        for t in range(1, int(input_lengths[n])):
            cur = [-math.inf] * S
            for s in range(S):
                terms = [prev[s]]
                if s >= 1:
                    terms.append(prev[s - 1])
                if s >= 2 and states[s] != blank and states[s] != states[s - 2]:
                    terms.append(prev[s - 2])
                cur[s] = lse(*terms) + float(log_probs[t, n, states[s]])
            prev = cur
        total = lse(prev[-1], prev[-2]) if S > 1 else prev[-1]
        loss = -total
        if zero_infinity and math.isinf(loss):
            loss = 0.0
        per_seq.append(loss)
    losses = np.array(per_seq, dtype=float)
    if reduction == "none":
        return losses
    elif reduction == "sum":
        return float(sum(per_seq))
    elif reduction == "mean":
        return float(sum(l / max(int(k), 1) for l, k in zip(per_seq, target_lengths)) / len(per_seq))
    raise ValueError(reduction)
''',
    "rescaled probabilities, Graves's way": CT_SIG + '''    if reduction not in ("none", "sum", "mean"):
        raise ValueError(f"reduction {reduction}")
    lp = np.asarray(log_probs, dtype=np.float64)
    n_seq = lp.shape[1]
    out = np.empty(n_seq)
    for n in range(n_seq):
        L = int(target_lengths[n])
        ext = np.full(2 * L + 1, blank, dtype=np.int64)
        ext[1::2] = np.asarray(targets[n])[:L]
        S = ext.size
        can_skip = np.zeros(S, dtype=bool)
        can_skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
        log_scale = 0.0
        alpha = np.zeros(S)
        dead = False
        for t in range(int(input_lengths[n])):
            frame = lp[t, n]
            peak = frame.max()
            y = np.exp(frame[ext] - peak)
            if t == 0:
                alpha[:min(S, 2)] = y[:min(S, 2)]
            else:
                nxt = alpha.copy()
                nxt[1:] += alpha[:-1]
                nxt[2:] += np.where(can_skip[2:], alpha[:-2], 0.0)
                alpha = nxt * y
            norm = alpha.sum()
            if norm == 0.0:
                dead = True
                break
            alpha = alpha / norm
            log_scale += peak + np.log(norm)
        end = 0.0 if dead else alpha[S - 1] + (alpha[S - 2] if S > 1 else 0.0)
        out[n] = np.inf if end == 0.0 else -(log_scale + np.log(end))
    if zero_infinity:
        out[np.isinf(out)] = 0.0
    if reduction == "none":
        return out
    if reduction == "sum":
        return float(np.sum(out))
    denom = np.clip(np.asarray(target_lengths, dtype=np.float64), 1.0, None)
    return float(np.sum(out / denom) / n_seq)
''',
}


def ct_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general batches: repeated labels next to each other, an empty target, input lengths shorter than
    the padded frames, padding that holds -1 or real classes, the blank as the last class, every reduction and
    one that is none of them, alignments that cannot fit with and without ``zero_infinity``, and a long input
    whose probability underflows outside log space; each gives the result and the arguments as the caller holds
    them afterwards."""
    rng = np.random.default_rng(109)
    f = ns["ctc_loss"]
    calls: list[Callable[[], object]] = []
    cases = [
        # T, C, blank, reduction, zero_infinity, scale, [(labels, input length)], padding value
        (12, 5, 0, "mean", False, 1.0, [([1, 2, 2, 3], 12), ([4], 7), ([2, 2], 9)], -1),
        (10, 6, 5, "none", False, 2.0, [([0, 1, 1, 0], 10), ([3, 4, 3], 6), ([], 4)], 5),
        (8, 4, 0, "mean", False, 1.5, [([], 8), ([3, 3, 3], 8), ([1, 2], 3)], 0),
        (6, 4, 0, "none", False, 1.0, [([1, 1, 1], 4), ([2, 3], 6), ([1, 2, 3], 3)], -1),
        (6, 4, 0, "sum", True, 1.0, [([1, 1, 1], 4), ([2, 3], 6), ([3, 3], 2)], 2),
        (7, 5, 2, "mean", True, 3.0, [([1, 1], 2), ([0, 4, 3, 1], 7), ([3], 1)], 9),
        (500, 30, 0, "sum", False, 0.1, [([5, 7, 7, 9, 11], 500), ([1], 450)], -1),
        (9, 5, 0, "max", False, 1.0, [([1, 2], 9)], -1),
        (15, 7, 3, "mean", False, 1.0, [([1, 2, 1, 2, 6, 6, 0], 15), ([5, 5, 5, 5], 11), ([4], 15)], 3),
    ]
    for T, C, blank, reduction, zero_inf, scale, seqs, pad in cases:
        N = len(seqs)
        S = max(1, max(len(s) for s, _ in seqs))
        logits = scale * rng.normal(size=(T, N, C))
        log_probs = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)
        targets = np.full((N, S), pad, dtype=int)
        for n, (labels, _) in enumerate(seqs):
            targets[n, :len(labels)] = labels
        input_lengths = np.array([k for _, k in seqs])
        target_lengths = np.array([len(s) for s, _ in seqs])

        def call(lp=log_probs, tg=targets, il=input_lengths, tl=target_lengths, b=blank, r=reduction,
                 z=zero_inf) -> object:
            args = [lp.copy(), tg.copy(), il.copy(), tl.copy()]
            return f(*args, blank=b, reduction=r, zero_infinity=z), args

        calls.append(call)
    return calls


# -- DINO: centring and sharpening of the teacher over multi-crop views (Caron et al. 2021) ------------------------

DN_HEAD = '''class DINOLoss:
    """Self-distillation without labels: the student's distribution over ``out_dim`` prototypes on every crop is
    fitted to the teacher's, centred by ``self.center`` and sharpened, on the ``n_global`` global crops.
    ``self.center`` (1, out_dim) is a running mean of the teacher's outputs."""

    def __init__(self, out_dim, ncrops, n_global=2, warmup_teacher_temp=0.04, teacher_temp=0.07,
                 warmup_teacher_temp_epochs=30, student_temp=0.1, center_momentum=0.9):
        self.out_dim = out_dim
        self.ncrops = ncrops
        self.n_global = n_global
        self.warmup_teacher_temp = warmup_teacher_temp
        self.teacher_temp = teacher_temp
        self.warmup_teacher_temp_epochs = warmup_teacher_temp_epochs
        self.student_temp = student_temp
        self.center_momentum = center_momentum
        self.center = np.zeros((1, out_dim))

    def __call__(self, student_output, teacher_output, epoch):
'''
DN_BODY = '''        batch = teacher_output.shape[0] // self.n_global
        if self.warmup_teacher_temp_epochs > 0:
            progress = min(epoch / self.warmup_teacher_temp_epochs, 1.0)
        else:
            progress = 1.0
        temp = self.warmup_teacher_temp + (self.teacher_temp - self.warmup_teacher_temp) * progress
        t_logits = (teacher_output - self.center) / temp
        t_logits = t_logits - t_logits.max(axis=1, keepdims=True)
        t_probs = np.exp(t_logits)
        t_probs = t_probs / t_probs.sum(axis=1, keepdims=True)
        s_logits = student_output / self.student_temp
        s_logits = s_logits - s_logits.max(axis=1, keepdims=True)
        s_logp = s_logits - np.log(np.exp(s_logits).sum(axis=1, keepdims=True))
        total = 0.0
        pairs = 0
        for iq in range(self.n_global):
            q = t_probs[iq * batch:(iq + 1) * batch]
            for v in range(self.ncrops):
                if v == iq:
                    continue
                total += np.mean(np.sum(-q * s_logp[v * batch:(v + 1) * batch], axis=1))
                pairs += 1
        batch_center = teacher_output.mean(axis=0, keepdims=True)
        self.center = self.center * self.center_momentum + batch_center * (1.0 - self.center_momentum)
        return float(total / pairs)
'''
DN_DOC = '''        """The DINO loss of one batch of B images, and the update of the centre.

        ``student_output`` (ncrops * B, out_dim): the student's logits on every crop, crop by crop (rows
        c * B .. (c + 1) * B - 1 are crop c of the B images, the ``n_global`` global crops first);
        ``teacher_output`` (n_global * B, out_dim): the teacher's logits on the global crops, in the same order.
        The teacher temperature rises linearly over the warm-up, ``warmup_teacher_temp + (teacher_temp -
        warmup_teacher_temp) * min(epoch / warmup_teacher_temp_epochs, 1)``, and stays at ``teacher_temp`` from
        then on (from the start when ``warmup_teacher_temp_epochs`` is 0); ``epoch`` may be fractional. The
        teacher's distribution is the softmax of ``(teacher_output - self.center) / temperature`` and the
        student's the log-softmax of ``student_output / self.student_temp``, both over the prototypes and both
        computed stably. For each teacher crop iq and each student crop v other than iq, the term is the
        cross-entropy ``sum(-teacher * log student)`` over the prototypes averaged over the B images; the loss,
        returned as a float, is the mean of these terms (n_global * ncrops - n_global of them).

        Afterwards (the loss uses the centre from before the call) the centre becomes
        ``center * center_momentum + (1 - center_momentum) * mean of teacher_output over its rows``. The outputs
        are not changed."""
'''
DN_GOLDEN = "\n\n" + DN_HEAD + DN_DOC + DN_BODY
DN_DRIVER = '''"""Pretrain a toy projection head with DINO on global and local crops: python pretrain_dino.py"""

import numpy as np

from selfdistill.dino import DINOLoss

IN_DIM = 4
OUT_DIM = 8
GLOBAL_CROPS = 2
LOCAL_CROPS = 4
BATCH = 16
LR = 0.05


def crops(rng, x):
    """Two global views (mild noise) and four local ones (more noise, a feature dropped)."""
    views = [x + 0.1 * rng.normal(size=x.shape) for _ in range(GLOBAL_CROPS)]
    for _ in range(LOCAL_CROPS):
        keep = rng.random(x.shape[1]) > 0.25
        views.append((x + 0.3 * rng.normal(size=x.shape)) * keep)
    return views


def main():
    rng = np.random.default_rng(0)
    centres = 2.0 * rng.normal(size=(5, IN_DIM))
    criterion = DINOLoss(OUT_DIM, GLOBAL_CROPS + LOCAL_CROPS)
    student = rng.normal(scale=0.5, size=(IN_DIM, OUT_DIM))
    teacher = student.copy()
    for epoch in range(6):
        for it in range(2):
            x = centres[rng.integers(0, len(centres), size=BATCH)] + 0.2 * rng.normal(size=(BATCH, IN_DIM))
            views = crops(rng, x)
            s_in = np.concatenate(views)
            t_out = np.concatenate(views[:GLOBAL_CROPS]) @ teacher
            center = criterion.center.copy()
            loss = criterion(s_in @ student, t_out, epoch)
            new_center = criterion.center.copy()
            grad = np.zeros_like(student)
            for idx in np.ndindex(*student.shape):
                bump = np.zeros_like(student)
                bump[idx] = 1e-5
                criterion.center = center.copy()
                grad[idx] = (criterion(s_in @ (student + bump), t_out, epoch) - loss) / 1e-5
            criterion.center = new_center
            student -= LR * grad
            teacher = 0.9 * teacher + 0.1 * student
            print(f"epoch {epoch} it {it}: dino loss {loss:.4f}, |center| {np.linalg.norm(new_center):.4f}")


if __name__ == "__main__":
    main()
'''

_dn = editor(DN_HEAD, DN_BODY)

DN_WRONG = {
    "same-view pairs kept": _dn('''                if v == iq:
                    continue
''', ""),
    "terms averaged over every crop pair": _dn("return float(total / pairs)",
                                               "return float(total / (self.n_global * self.ncrops))"),
    "centre updated before the loss": _dn('''        t_logits = (teacher_output - self.center) / temp
''', '''        self.center = self.center * self.center_momentum + teacher_output.mean(axis=0, keepdims=True) * (
            1.0 - self.center_momentum)
        t_logits = (teacher_output - self.center) / temp
''').replace('''        batch_center = teacher_output.mean(axis=0, keepdims=True)
        self.center = self.center * self.center_momentum + batch_center * (1.0 - self.center_momentum)
''', ""),
    "temperature not held after the warm-up": _dn(
        "progress = min(epoch / self.warmup_teacher_temp_epochs, 1.0)",
        "progress = epoch / self.warmup_teacher_temp_epochs"),
    "no warm-up of zero epochs": _dn('''        if self.warmup_teacher_temp_epochs > 0:
            progress = min(epoch / self.warmup_teacher_temp_epochs, 1.0)
        else:
            progress = 1.0
''', '''        progress = min(epoch / self.warmup_teacher_temp_epochs, 1.0)
'''),
    "pins center_momentum": _dn(
        "self.center = self.center * self.center_momentum + batch_center * (1.0 - self.center_momentum)",
        "self.center = self.center * 0.9 + batch_center * 0.1"),
    "teacher softmax without the shift": _dn("        t_logits = t_logits - t_logits.max(axis=1, keepdims=True)\n",
                                             ""),
    "crops split image by image": _dn('''        s_logp = s_logits - np.log(np.exp(s_logits).sum(axis=1, keepdims=True))
''', '''        s_logp = s_logits - np.log(np.exp(s_logits).sum(axis=1, keepdims=True))
        s_logp = s_logp.reshape(batch, self.ncrops, -1).transpose(1, 0, 2).reshape(self.ncrops * batch, -1)
        t_probs = t_probs.reshape(batch, self.n_global, -1).transpose(1, 0, 2).reshape(self.n_global * batch, -1)
'''),
    "pins two global crops": _dn("        batch = teacher_output.shape[0] // self.n_global\n",
                                 "        batch = teacher_output.shape[0] // 2\n").replace(
        "for iq in range(self.n_global):", "for iq in range(2):"),
}
DN_RIGHT = {
    "crop by crop with a log-sum-exp helper": DN_HEAD + '''        def log_softmax(z):
            top = np.max(z, axis=-1, keepdims=True)
            return z - top - np.log(np.sum(np.exp(z - top), axis=-1, keepdims=True))

        w = self.warmup_teacher_temp_epochs
        if w <= 0 or epoch >= w:
            tau = self.teacher_temp
        else:
            tau = self.warmup_teacher_temp + (self.teacher_temp - self.warmup_teacher_temp) * epoch / w
        teacher_chunks = np.split(teacher_output, self.n_global)
        student_chunks = np.split(student_output, self.ncrops)
        old_center = self.center
        targets = [np.exp(log_softmax((chunk - old_center) / tau)) for chunk in teacher_chunks]
        preds = [log_softmax(chunk / self.student_temp) for chunk in student_chunks]
        terms = []
        for i, target in enumerate(targets):
            for j, pred in enumerate(preds):
                if i != j:
                    terms.append(float(-(target * pred).sum(axis=1).mean()))
        m = self.center_momentum
        self.center = m * old_center + (1.0 - m) * np.mean(teacher_output, axis=0)[None, :]
        return sum(terms) / len(terms)
''',
    "all pairs at once with einsum and a mask": DN_HEAD + '''        G, V = self.n_global, self.ncrops
        B = len(teacher_output) // G
        w = self.warmup_teacher_temp_epochs
        frac = 1.0 if w == 0 else float(np.clip(epoch / w, 0.0, 1.0))
        tau = (1.0 - frac) * self.warmup_teacher_temp + frac * self.teacher_temp
        t = ((teacher_output - self.center) / tau).reshape(G, B, -1)
        t = np.exp(t - t.max(axis=-1, keepdims=True))
        t /= t.sum(axis=-1, keepdims=True)
        s = (student_output / self.student_temp).reshape(V, B, -1)
        s = s - np.logaddexp.reduce(s, axis=-1, keepdims=True)
        ce = -np.einsum("gbk,vbk->gv", t, s) / B
        mask = np.ones((G, V), dtype=bool)
        mask[np.arange(G), np.arange(G)] = False
        loss = ce[mask].mean()
        self.center = self.center_momentum * self.center + (1.0 - self.center_momentum) * teacher_output.sum(
            axis=0, keepdims=True) / len(teacher_output)
        return float(loss)
''',
}


def dn_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of one loss object over a few calls on general settings: epochs inside the warm-up, at its end,
    past it and fractional; a warm-up of zero epochs; one, two and three global crops; other temperatures and
    momenta; teacher outputs large enough to overflow an unshifted softmax. Each gives, after every call, the
    loss, the centre and the outputs as the caller holds them."""
    rng = np.random.default_rng(113)
    calls: list[Callable[[], object]] = []
    for out_dim, ncrops, kwargs, batch, epochs, scale in (
            (8, 6, {}, 5, (0, 3, 12), 1.0),
            (6, 4, {"warmup_teacher_temp_epochs": 10}, 4, (2.5, 10, 25), 2.0),
            (5, 3, {"n_global": 1, "teacher_temp": 0.05, "student_temp": 0.2}, 6, (0, 1), 1.0),
            (7, 5, {"n_global": 3, "center_momentum": 0.5, "warmup_teacher_temp_epochs": 4}, 3, (1, 3, 7), 1.5),
            (4, 4, {"warmup_teacher_temp_epochs": 0, "warmup_teacher_temp": 0.02}, 4, (0, 5), 1.0),
            (6, 6, {"center_momentum": 0.99, "teacher_temp": 0.04}, 3, (30, 31), 40.0),
            (10, 2, {"warmup_teacher_temp": 0.1, "teacher_temp": 0.03, "warmup_teacher_temp_epochs": 5}, 8,
             (0, 2, 4, 6), 3.0)):
        n_global = kwargs.get("n_global", 2)
        steps = [(scale * rng.normal(size=(ncrops * batch, out_dim)),
                  scale * rng.normal(size=(n_global * batch, out_dim)) + rng.normal(size=out_dim), e)
                 for e in epochs]

        def call(out_dim=out_dim, ncrops=ncrops, kwargs=kwargs, steps=steps) -> object:
            criterion = ns["DINOLoss"](out_dim, ncrops, **kwargs)
            trace = []
            for s_out, t_out, epoch in steps:
                s, t = s_out.copy(), t_out.copy()
                loss = criterion(s, t, epoch)
                trace.append((loss, np.array(criterion.center, dtype=float).reshape(1, -1), s, t))
            return trace

        calls.append(call)
    return calls


# -- Speculative decoding's acceptance rule (Leviathan, Kalman and Matias 2023; Chen et al. 2023) -----------------

SD_SIG = "def speculative_accept(draft_tokens, draft_probs, target_probs, accept_draws, sample_draw, greedy=False):\n"
SD_BODY = '''    draft_tokens = np.asarray(draft_tokens)
    k = len(draft_tokens)
    accepted = 0
    for i in range(k):
        x = int(draft_tokens[i])
        if greedy:
            keep = x == int(np.argmax(target_probs[i]))
        else:
            keep = accept_draws[i] < target_probs[i, x] / draft_probs[i, x]
        if not keep:
            break
        accepted += 1
    if greedy:
        new = int(np.argmax(target_probs[accepted]))
    else:
        if accepted < k:
            weights = np.maximum(target_probs[accepted] - draft_probs[accepted], 0.0)
        else:
            weights = target_probs[k]
        cdf = np.cumsum(weights)
        new = int(np.searchsorted(cdf, sample_draw * cdf[-1], side="right"))
    tokens = np.append(draft_tokens[:accepted], new).astype(int)
    return tokens, accepted
'''
SD_DOC = '''    """Which of k drafted tokens the target model keeps, and the token that follows them.

    ``draft_tokens`` (k,) integers: the draft model's tokens, token i sampled from its distribution
    ``draft_probs[i]`` (k, V); ``target_probs`` (k + 1, V): the target model's distributions p_i at the same k
    positions and at the one after the last draft token. Every row is a probability distribution, and
    ``draft_probs[i, draft_tokens[i]] > 0``. ``accept_draws`` (k,) and ``sample_draw`` are uniform draws in
    [0, 1).

    The draft tokens are taken in order: token x_i is kept when ``accept_draws[i] < p_i(x_i) / q_i(x_i)`` (so a
    ratio of 1 or more always keeps it, a token the target gives probability 0 never); at the first one not kept
    no later token is looked at, and the next token is drawn from the residual ``max(p_i - q_i, 0)``,
    normalised. When all k are kept, the next token is drawn from p_k, the extra row. A draw from weights w is the
    smallest index j with ``cumsum(w)[j] > sample_draw * cumsum(w)[-1]``.

    With ``greedy``, the draws are not used: x_i is kept when it is the argmax of p_i (the first index on ties),
    and the next token is the argmax of p_i at the first token not kept, or of p_k when all are kept.

    Returns ``(tokens, n_accepted)``: an integer array of the n_accepted kept draft tokens followed by the new
    token (n_accepted + 1 of them), and the int n_accepted. No argument is changed.
    """
'''
SD_GOLDEN = "\n\n" + SD_SIG + SD_DOC + SD_BODY
SD_DRIVER = '''"""Speculative sampling from a toy bigram model with a cheaper, noisier draft: python speculative.py"""

import numpy as np

from specdec.sampling import speculative_accept

VOCAB = 12
DRAFT_LEN = 4


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    rng = np.random.default_rng(0)
    target_logits = 2.0 * rng.normal(size=(VOCAB, VOCAB))
    draft_logits = 0.7 * target_logits + rng.normal(size=(VOCAB, VOCAB))
    target_table, draft_table = softmax(target_logits), softmax(draft_logits)
    for prompt in (1, 6):
        seq = [prompt]
        rounds, kept = 0, 0
        while len(seq) < 40:
            drafts, q_rows = [], []
            prev = seq[-1]
            for _ in range(DRAFT_LEN):
                q = draft_table[prev]
                prev = int(rng.choice(VOCAB, p=q))
                drafts.append(prev)
                q_rows.append(q)
            contexts = [seq[-1]] + drafts
            p_rows = target_table[contexts]
            tokens, n = speculative_accept(np.array(drafts), np.array(q_rows), p_rows, rng.random(DRAFT_LEN),
                                           rng.random())
            seq.extend(tokens.tolist())
            rounds += 1
            kept += n
        print(f"prompt {prompt}: {rounds} rounds, {kept / (rounds * DRAFT_LEN):.3f} of drafts kept, "
              f"tokens per round {(len(seq) - 1) / rounds:.2f}")
        print(f"  {seq}")


if __name__ == "__main__":
    main()
'''

_sd = editor(SD_SIG, SD_BODY)

SD_WRONG = {
    "residual not clipped at zero": _sd(
        "weights = np.maximum(target_probs[accepted] - draft_probs[accepted], 0.0)",
        "weights = target_probs[accepted] - draft_probs[accepted]"),
    "rejection redrawn from the target": _sd(
        "weights = np.maximum(target_probs[accepted] - draft_probs[accepted], 0.0)",
        "weights = target_probs[accepted]"),
    "extra token from the last draft row": _sd("weights = target_probs[k]", "weights = target_probs[k - 1]"),
    "acceptance ratio inverted": _sd("keep = accept_draws[i] < target_probs[i, x] / draft_probs[i, x]",
                                     "keep = accept_draws[i] < draft_probs[i, x] / target_probs[i, x]"),
    "kept at equality": _sd("keep = accept_draws[i] < target_probs[i, x] / draft_probs[i, x]",
                            "keep = accept_draws[i] <= target_probs[i, x] / draft_probs[i, x]"),
    "greedy flag ignored": _sd('''        if greedy:
            keep = x == int(np.argmax(target_probs[i]))
        else:
            keep = accept_draws[i] < target_probs[i, x] / draft_probs[i, x]
''', '''        keep = accept_draws[i] < target_probs[i, x] / draft_probs[i, x]
''').replace('''    if greedy:
        new = int(np.argmax(target_probs[accepted]))
    else:
        if accepted < k:
            weights = np.maximum(target_probs[accepted] - draft_probs[accepted], 0.0)
        else:
            weights = target_probs[k]
        cdf = np.cumsum(weights)
        new = int(np.searchsorted(cdf, sample_draw * cdf[-1], side="right"))
''', '''    if accepted < k:
        weights = np.maximum(target_probs[accepted] - draft_probs[accepted], 0.0)
    else:
        weights = target_probs[k]
    cdf = np.cumsum(weights)
    new = int(np.searchsorted(cdf, sample_draw * cdf[-1], side="right"))
'''),
    "residual drawn unnormalised": _sd("new = int(np.searchsorted(cdf, sample_draw * cdf[-1], side=\"right\"))",
                                       "new = int(np.searchsorted(cdf, sample_draw, side=\"right\"))"),
    "no extra token after a full acceptance": _sd('''    tokens = np.append(draft_tokens[:accepted], new).astype(int)
''', '''    if accepted == k and not greedy:
        return draft_tokens.astype(int), k
    tokens = np.append(draft_tokens[:accepted], new).astype(int)
'''),
    "greedy compares the draft's argmax": _sd("keep = x == int(np.argmax(target_probs[i]))",
                                             "keep = int(np.argmax(draft_probs[i])) == "
                                             "int(np.argmax(target_probs[i]))"),
}
SD_RIGHT = {
    "scalar loop with a running sum": SD_SIG + '''    def draw(w, u):
        total = 0.0
        running = []
        for value in w:
            total += float(value)
            running.append(total)
        threshold = u * total
        for j, c in enumerate(running):
            if c > threshold:
                return j
        return len(running)

    def first_argmax(row):
        best = 0
        for j in range(1, len(row)):
            if row[j] > row[best]:
                best = j
        return best

    kept = []
    for i, tok in enumerate(draft_tokens):
        tok = int(tok)
        if greedy:
            ok = tok == first_argmax(target_probs[i])
        else:
            ok = accept_draws[i] < target_probs[i][tok] / draft_probs[i][tok]
        if not ok:
            break
        kept.append(tok)
    n = len(kept)
    row = target_probs[n]
    if greedy:
        nxt = first_argmax(row)
    elif n < len(draft_tokens):
        nxt = draw([max(p - q, 0.0) for p, q in zip(row, draft_probs[n])], sample_draw)
    else:
        nxt = draw(list(row), sample_draw)
    return np.array(kept + [nxt], dtype=int), n
''',
    "all ratios at once, first failure by argmin": SD_SIG + '''    toks = np.asarray(draft_tokens, dtype=np.int64)
    k = toks.shape[0]
    rows = np.arange(k)
    if greedy:
        ok = toks == np.argmax(target_probs[:k], axis=1)
    else:
        ratio = target_probs[rows, toks] / draft_probs[rows, toks]
        ok = np.asarray(accept_draws)[:k] < ratio
    n = k if ok.all() else int(np.argmin(ok))
    if greedy:
        nxt = int(target_probs[n].argmax())
    else:
        w = target_probs[n] if n == k else np.clip(target_probs[n] - draft_probs[n], 0.0, None)
        cdf = np.cumsum(w)
        nxt = int(np.argmax(cdf > sample_draw * cdf[-1]))
    return np.concatenate([toks[:n], [nxt]]).astype(int), int(n)
''',
}


def sd_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general inputs: drafts of 1 to 5 tokens, rejection at the first, a middle and no position, a
    residual with several positive entries and one that the target's row would not give, a draft token the
    target gives probability 0 with a draw of 0, ratios below and above 1, draws near 1, the greedy mode with
    drafts that are not the draft's argmax and with ties; each gives the result and the arguments as the caller
    holds them afterwards."""
    rng = np.random.default_rng(127)

    def dist(v, sharp=1.0, zero=()):
        p = np.exp(sharp * rng.normal(size=v))
        p[list(zero)] = 0.0
        return p / p.sum()

    cases = []
    for k, v, draws, u, greedy in ((4, 8, [0.1, 0.2, 0.3, 0.4], 0.5, False),
                                   (3, 6, [0.9, 0.9, 0.9], 0.3, False),
                                   (5, 10, [0.0, 0.05, 0.0, 0.05, 0.0], 0.999, False),
                                   (2, 5, [0.6, 0.99], 0.0, False),
                                   (1, 7, [0.4], 0.75, False),
                                   (3, 6, [0.5, 0.5, 0.5], 0.5, True),
                                   (4, 9, [0.2, 0.2, 0.2, 0.2], 0.6, True)):
        q = np.array([dist(v, 1.5) for _ in range(k)])
        p = np.array([dist(v, 2.0) for _ in range(k + 1)])
        toks = np.array([rng.choice(v, p=row) for row in q])
        cases.append((toks, q, p, np.array(draws), u, greedy))
    # a draft the target never produces, a draw of 0: rejected, residual from the first row
    q = np.array([dist(6), dist(6)])
    p = np.array([dist(6, zero=(2,)), dist(6), dist(6)])
    q[0, 2] = max(q[0, 2], 0.2)
    q[0] /= q[0].sum()
    cases.append((np.array([2, 4]), q, p, np.array([0.0, 0.0]), 0.4, False))
    # all kept (target confident on the drafts), the extra row decides
    p = np.array([dist(5), dist(5), dist(5)])
    p[0] = [0.02, 0.9, 0.02, 0.03, 0.03]
    p[1] = [0.05, 0.05, 0.05, 0.8, 0.05]
    q = np.array([[0.2] * 5, [0.2] * 5])
    cases.append((np.array([1, 3]), q, p, np.array([0.7, 0.95]), 0.85, False))
    # rejected at the first token: the residual puts everything on token 0, the target row would not
    p = np.array([[0.5, 0.3, 0.2], [0.2, 0.2, 0.6]])
    q = np.array([[0.1, 0.6, 0.3]])
    cases.append((np.array([1]), q, p, np.array([0.7]), 0.9, False))
    # greedy with ties in the target and a draft token that is not the draft model's argmax
    p = np.array([[0.3, 0.3, 0.2, 0.2], [0.1, 0.4, 0.4, 0.1], [0.25, 0.25, 0.25, 0.25]])
    q = np.array([[0.1, 0.2, 0.6, 0.1], [0.5, 0.3, 0.1, 0.1]])
    cases.append((np.array([0, 1]), q, p, np.array([0.5, 0.5]), 0.5, True))
    cases.append((np.array([0, 2]), q, p, np.array([0.1, 0.1]), 0.2, True))
    calls: list[Callable[[], object]] = []
    for toks, q, p, draws, u, greedy in cases:

        def call(toks=toks, q=q, p=p, draws=draws, u=u, greedy=greedy) -> object:
            args = [toks.copy(), q.copy(), p.copy(), draws.copy()]
            tokens, n = ns["speculative_accept"](*args, u, greedy=greedy)
            return np.asarray(tokens), n, args

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
_MATH_NP = "import math\n\nimport numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "40-DynamicLossScaler", "files": {"mixedprec/__init__.py": "", "mixedprec/scaler.py":
     '"""Helpers for float16 training."""\n\nimport numpy as np\n' + LS_GOLDEN, "train_fp16.py": LS_DRIVER},
     "function": "mixedprec/scaler.py::DynamicLossScaler.update", "command": "python train_fp16.py",
     "head": _NP, "wrong": LS_WRONG, "right": LS_RIGHT, "check": ls_check,
     "gaps": {"NaN not taken for an overflow": ["np.isfinite(g)"],
              "finite-step count kept through an overflow": ["good_steps", "self.good_steps = 0"],
              "gradients rebound, not unscaled": ["g /= self.scale"],
              "no floor at min_scale": ["min_scale"], "no cap at max_scale": ["max_scale"],
              "hysteresis ignored": ["hysteresis", "overflows_left"],
              "tolerance not restored by a growth": ["self.overflows_left = self.hysteresis"],
              "grows one step late": ["self.good_steps >= self.growth_interval"],
              "gradients unscaled before the check": ["g /= self.scale"]}},
    {"name": "41-CTCLoss", "files": {"speech/__init__.py": "", "speech/ctc.py":
     '"""Alignment-free sequence losses."""\n\nimport numpy as np\n' + CT_GOLDEN,
     "evaluate_ctc.py": CT_DRIVER},
     "function": "speech/ctc.py::ctc_loss", "command": "python evaluate_ctc.py",
     "head": _MATH_NP, "wrong": CT_WRONG, "right": CT_RIGHT, "check": ct_check,
     "gaps": {"skip allowed between equal labels": ["labels[1:] != labels[:-1]"],
              "input lengths ignored": ["input_lengths"],
              "ends on the last blank only": ["np.logaddexp(alpha[-1], alpha[-2])"],
              "mean not over target lengths": ["target_lengths", "np.maximum(np.asarray(target_lengths), 1)"],
              "empty target divides by zero": ["np.maximum(np.asarray(target_lengths), 1)"],
              "zero_infinity ignored": ["zero_infinity"], "pins the blank to class 0": ["blank"],
              "probabilities instead of log space": ["np.logaddexp(np.logaddexp(alpha, one), two)"],
              "padding told apart by the blank": ["targets[n][:L]", "target_lengths"]}},
    {"name": "42-DINOLoss", "files": {"selfdistill/__init__.py": "", "selfdistill/dino.py":
     '"""Self-distillation objectives."""\n\nimport numpy as np\n' + DN_GOLDEN, "pretrain_dino.py": DN_DRIVER},
     "function": "selfdistill/dino.py::DINOLoss.__call__", "command": "python pretrain_dino.py",
     "head": _NP, "wrong": DN_WRONG, "right": DN_RIGHT, "check": dn_check,
     "gaps": {"same-view pairs kept": ["v == iq"],
              "terms averaged over every crop pair": ["total / pairs", "pairs"],
              "centre updated before the loss": ["self.center"],
              "temperature not held after the warm-up": ["min(epoch / self.warmup_teacher_temp_epochs, 1.0)"],
              "no warm-up of zero epochs": ["self.warmup_teacher_temp_epochs > 0"],
              "pins center_momentum": ["center_momentum"],
              "teacher softmax without the shift": ["t_logits.max(axis=1, keepdims=True)"],
              "crops split image by image": ["iq * batch:(iq + 1) * batch", "v * batch:(v + 1) * batch"],
              "pins two global crops": ["n_global"]}},
    {"name": "43-SpeculativeAccept", "files": {"specdec/__init__.py": "", "specdec/sampling.py":
     '"""Sampling with a draft model."""\n\nimport numpy as np\n' + SD_GOLDEN, "speculative.py": SD_DRIVER},
     "function": "specdec/sampling.py::speculative_accept", "command": "python speculative.py",
     "head": _NP, "wrong": SD_WRONG, "right": SD_RIGHT, "check": sd_check,
     "gaps": {"residual not clipped at zero": ["np.maximum(target_probs[accepted] - draft_probs[accepted], 0.0)"],
              "rejection redrawn from the target": ["target_probs[accepted] - draft_probs[accepted]"],
              "extra token from the last draft row": ["target_probs[k]"],
              "acceptance ratio inverted": ["target_probs[i, x] / draft_probs[i, x]"],
              "kept at equality": ["accept_draws[i] < target_probs[i, x] / draft_probs[i, x]"],
              "greedy flag ignored": ["greedy"], "residual drawn unnormalised": ["sample_draw * cdf[-1]"],
              "no extra token after a full acceptance": ["weights = target_probs[k]", "target_probs[k]"],
              "greedy compares the draft's argmax": ["greedy", "x == int(np.argmax(target_probs[i]))"]}},
]
"""The tenth fresh held-out tasks."""
