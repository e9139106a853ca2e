"""A fifteenth held-out set for ``wrong_answers.py --set fresh14``: four numpy tasks of shapes that no other set
nor any test fixture has. The first is the knowledge-distillation loss of Hinton, Vinyals and Dean (2015) as a
method reading ``self.cfg.distill``: the KL divergence from the teacher's to the student's distribution, both
softened by ``temperature``, scaled by T squared when ``scale_by_t2``, mixed by ``alpha`` with the student's
cross-entropy on the hard labels at temperature 1, positions whose label is ``ignore_index`` left out, banned (-inf)
teacher logits guarded, and a ``reduction`` of "mean" (over the labelled positions, 0.0 when there is none), "sum"
or "none"; the driver compares student checkpoints on padded tagging batches with the default config (T 2, alpha
0.7, the T squared scaling, -100, "mean"), never with another reduction, ignore index, banned logits or a batch with
no label. The second is the Lion optimiser (Chen et al. 2023) as a ``step`` updating a list of parameters and their
momenta in place, called once per step: the sign of the beta1 interpolation of momentum and gradient, decoupled
weight decay scaled by the learning rate, the momentum refreshed with beta2 afterwards, a ``maximize`` flag, missing
gradients skipped and a sign of zero that is zero; the driver trains a small classifier with a learning rate and a
weight decay of its own, never with other betas, ``maximize`` or a missing gradient. The third is MoCo's contrastive
loss over a queue of negative keys (He et al. 2020), reading ``self.*``: the InfoNCE loss of the positive key among
the queue's keys at ``temperature``, the top-1 accuracy (ties to the positive), then the batch's keys written into
the queue from ``self.ptr`` on, wrapping around, with a ``normalize`` flag and an ``eps`` guard for zero vectors;
the driver monitors a toy encoder pair with a queue that is a multiple of its batch, never wrapping part way, never
unnormalised nor with a zero vector. The fourth is the adaptive KL controller of Ziegler et al. (2019), updated once
per step: the proportional error ``KL / target - 1`` clipped to ``[-clip, clip]``, the coefficient multiplied by
``1 + error * n_steps / horizon`` and bounded by ``min_coef`` and ``max_coef``, a fixed coefficient when ``target``
is None, per-sample KLs averaged and a KL that is not finite ignored; the driver tunes a toy bandit's RLHF penalty
with a float KL each step, never with another clip, bounds, no target or a non-finite KL. Written before its first
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

# -- Knowledge distillation (Hinton, Vinyals and Dean 2015) --------------------------------------------------------

KD_HELPER = '''def log_softmax(x):
    """log(softmax(x)) along the last axis, computed stably; -inf entries stay -inf."""
    top = np.max(x, axis=-1, keepdims=True)
    shifted = x - top
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


'''
KD_HEAD = KD_HELPER + '''class Distiller:
    """Trains a student against a teacher's softened outputs. ``self.cfg.distill`` holds ``temperature``, ``alpha``
    (the weight of the soft term), ``scale_by_t2`` (multiply the soft term by T squared, so that its gradients keep
    their size as T changes), ``ignore_index`` (the label of padded positions) and ``reduction``."""

    def __init__(self, cfg):
        self.cfg = cfg

    def loss(self, student_logits, teacher_logits, labels):
'''
KD_BODY = '''        d = self.cfg.distill
        if d.reduction not in ("mean", "sum", "none"):
            raise ValueError(f"unknown reduction {d.reduction!r}")
        if d.temperature <= 0:
            raise ValueError(f"temperature must be positive, got {d.temperature}")
        student = np.asarray(student_logits, dtype=np.float64)
        teacher = np.asarray(teacher_logits, dtype=np.float64)
        labels = np.asarray(labels)
        valid = labels != d.ignore_index
        t = d.temperature
        log_p_student = log_softmax(student / t)
        log_p_teacher = log_softmax(teacher / t)
        p_teacher = np.exp(log_p_teacher)
        soft = np.sum(np.where(p_teacher > 0, p_teacher * (log_p_teacher - log_p_student), 0.0), axis=-1)
        if d.scale_by_t2:
            soft = soft * t * t
        safe = np.where(valid, labels, 0)
        log_probs = log_softmax(student)
        hard = -np.take_along_axis(log_probs, safe[..., None], axis=-1)[..., 0]
        per_position = np.where(valid, d.alpha * soft + (1.0 - d.alpha) * hard, 0.0)
        if d.reduction == "none":
            return per_position
        total = float(per_position.sum())
        if d.reduction == "sum":
            return total
        count = int(valid.sum())
        return total / count if count else 0.0
'''
KD_DOC = '''        """The distillation loss of a batch.

        ``student_logits`` and ``teacher_logits``: float arrays (..., C) of the same shape (any leading axes: a
        batch, or a batch of sequences); ``labels``: an int array of the leading shape, a class in [0, C) or
        ``ignore_index`` at a padded position. Settings, read from ``self.cfg.distill``: ``reduction`` (one of
        "mean", "sum", "none", else ValueError), ``temperature`` T (> 0, else ValueError; the checks come in that
        order), ``alpha``, ``scale_by_t2`` and ``ignore_index``.

        At each position: the soft term ``KL(p_t || p_s) = sum_c p_t[c] (log p_t[c] - log p_s[c])`` with ``p_t =
        softmax(teacher / T)`` and ``p_s = softmax(student / T)`` (a class the teacher bans with a -inf logit has
        p_t = 0 and adds nothing), multiplied by ``T * T`` when ``scale_by_t2``; the hard term, the cross-entropy
        ``-log softmax(student)[label]`` at temperature 1; the position's loss ``alpha * soft + (1 - alpha) *
        hard``. A position whose label is ``ignore_index`` has loss 0 and is not counted. Log-softmaxes are
        computed stably (logits of any size).

        Returns, by ``reduction``: "none", a float64 array of the labels' shape; "sum", the float sum over the
        labelled positions; "mean", that sum divided by their number, or 0.0 when every position is ignored. No
        argument is changed.
        """
'''
KD_GOLDEN = "\n\n" + KD_HEAD + KD_DOC + KD_BODY
KD_CONFIG = '''"""Experiment configuration."""

from dataclasses import dataclass, field


@dataclass
class DistillConfig:
    temperature: float = 2.0
    alpha: float = 0.7
    scale_by_t2: bool = True
    ignore_index: int = -100
    reduction: str = "mean"


@dataclass
class ExperimentConfig:
    n_tags: int = 6
    hidden: int = 10
    distill: DistillConfig = field(default_factory=DistillConfig)
'''
KD_DRIVER = '''"""Compare student checkpoints by their distillation loss against the teacher tagger on padded batches:
python evaluate_students.py"""

import numpy as np

from kd.config import ExperimentConfig
from kd.distill import Distiller

MAX_LEN = 12
N_BATCHES = 8
BATCH = 6


def make_batches(rng, hidden):
    """Batches of token features (batch, MAX_LEN, hidden) with sequence lengths from 3 to MAX_LEN."""
    batches = []
    for _ in range(N_BATCHES):
        lengths = rng.integers(3, MAX_LEN + 1, size=BATCH)
        x = rng.normal(size=(BATCH, MAX_LEN, hidden))
        mask = np.arange(MAX_LEN)[None, :] < lengths[:, None]
        batches.append((x, mask))
    return batches


def main():
    rng = np.random.default_rng(0)
    cfg = ExperimentConfig()
    distiller = Distiller(cfg)
    teacher_w = rng.normal(scale=0.8, size=(cfg.hidden, cfg.n_tags))
    gold_w = teacher_w + rng.normal(scale=0.4, size=teacher_w.shape)
    students = {}
    for k in range(5):
        share = k / 4
        students[f"checkpoint-{k}"] = share * teacher_w + (1 - share) * rng.normal(scale=0.8, size=teacher_w.shape)
    losses = {name: [] for name in students}
    for x, mask in make_batches(rng, cfg.hidden):
        labels = np.where(mask, np.argmax(x @ gold_w, axis=-1), cfg.distill.ignore_index)
        teacher_logits = x @ teacher_w
        for name, w in students.items():
            losses[name].append(distiller.loss(x @ w, teacher_logits, labels))
    for name, values in losses.items():
        print(f"{name}: distillation loss {np.mean(values):.4f} (min {np.min(values):.4f}, max {np.max(values):.4f})")
    best = min(losses, key=lambda name: np.mean(losses[name]))
    print(f"best student: {best}")


if __name__ == "__main__":
    main()
'''

_kd = editor(KD_HEAD, KD_BODY)

KD_WRONG = {
    "T squared scaling always on": _kd('''        if d.scale_by_t2:
            soft = soft * t * t
''', '''        soft = soft * t * t
'''),
    "KL taken the other way": _kd(
        "soft = np.sum(np.where(p_teacher > 0, p_teacher * (log_p_teacher - log_p_student), 0.0), axis=-1)",
        "soft = np.sum(np.exp(log_p_student) * (log_p_student - log_p_teacher), axis=-1)"),
    "teacher not softened": _kd("log_p_teacher = log_softmax(teacher / t)", "log_p_teacher = log_softmax(teacher)"),
    "hard term at the temperature": _kd("log_probs = log_softmax(student)", "log_probs = log_p_student"),
    "pins ignore_index": _kd("valid = labels != d.ignore_index", "valid = labels != -100"),
    "soft term kept at ignored positions": _kd(
        "per_position = np.where(valid, d.alpha * soft + (1.0 - d.alpha) * hard, 0.0)",
        "per_position = d.alpha * soft + (1.0 - d.alpha) * np.where(valid, hard, 0.0)"),
    "mean over every position": _kd("count = int(valid.sum())", "count = int(valid.size)"),
    "banned teacher classes not guarded": _kd(
        "soft = np.sum(np.where(p_teacher > 0, p_teacher * (log_p_teacher - log_p_student), 0.0), axis=-1)",
        "soft = np.sum(p_teacher * (log_p_teacher - log_p_student), axis=-1)"),
    "batch with no label not guarded": _kd("return total / count if count else 0.0", "return total / count"),
    "reduction none keeps the labelled positions only": _kd('''        if d.reduction == "none":
            return per_position
''', '''        if d.reduction == "none":
            return per_position[valid]
'''),
}
KD_RIGHT = {
    "position by position with math": KD_HEAD + '''        import math

        cfg = self.cfg.distill
        if cfg.reduction not in {"mean", "sum", "none"}:
            raise ValueError(cfg.reduction)
        if not cfg.temperature > 0:
            raise ValueError("temperature")
        T = float(cfg.temperature)
        s_all = np.asarray(student_logits, dtype=float)
        t_all = np.asarray(teacher_logits, dtype=float)
        lab = np.asarray(labels)
        classes = s_all.shape[-1]
        s_rows = s_all.reshape(-1, classes)
        t_rows = t_all.reshape(-1, classes)
        flat = lab.reshape(-1)
        out = np.zeros(flat.shape[0])

        def log_soft(row):
            top = max(row)
            z = math.log(sum(math.exp(v - top) for v in row))
            return [v - top - z for v in row]

        for i in range(flat.shape[0]):
            if flat[i] == cfg.ignore_index:
                continue
            ls = log_soft([float(v) / T for v in s_rows[i]])
            lt = log_soft([float(v) / T for v in t_rows[i]])
            kl = sum(math.exp(b) * (b - a) for a, b in zip(ls, lt) if b != -math.inf)
            if cfg.scale_by_t2:
                kl *= T ** 2
            ce = -log_soft([float(v) for v in s_rows[i]])[int(flat[i])]
            out[i] = cfg.alpha * kl + (1 - cfg.alpha) * ce
        out = out.reshape(lab.shape)
        if cfg.reduction == "none":
            return out
        if cfg.reduction == "sum":
            return float(out.sum())
        n = int(np.sum(flat != cfg.ignore_index))
        return float(out.sum() / n) if n > 0 else 0.0
''',
    "labelled rows gathered, logaddexp": KD_HEAD + '''        conf = self.cfg.distill
        if conf.reduction not in ("none", "sum", "mean"):
            raise ValueError("bad reduction")
        if conf.temperature <= 0:
            raise ValueError("bad temperature")
        tau = conf.temperature
        s = np.asarray(student_logits, dtype=np.float64)
        t = np.asarray(teacher_logits, dtype=np.float64)
        y = np.asarray(labels)
        keep = y != conf.ignore_index
        per = np.zeros(y.shape, dtype=np.float64)
        s_k, t_k, y_k = s[keep], t[keep], y[keep]
        ls = s_k / tau - np.logaddexp.reduce(s_k / tau, axis=-1, keepdims=True)
        lt = t_k / tau - np.logaddexp.reduce(t_k / tau, axis=-1, keepdims=True)
        pt = np.exp(lt)
        kl = (pt * np.where(pt > 0, lt - ls, 0.0)).sum(axis=-1)
        if conf.scale_by_t2:
            kl = kl * tau ** 2
        log_q = s_k - np.logaddexp.reduce(s_k, axis=-1, keepdims=True)
        ce = -log_q[np.arange(len(y_k)), y_k]
        per[keep] = conf.alpha * kl + (1.0 - conf.alpha) * ce
        if conf.reduction == "none":
            return per
        if conf.reduction == "sum":
            return float(per.sum())
        return float(per.sum() / keep.sum()) if keep.any() else 0.0
''',
}


def kd_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general batches: the default config on a flat batch with padded rows and on a batch of sequences,
    the T squared scaling off with another temperature and alpha, T of 1, an ignore index of -1 (a label -100 would
    be out of range there), the sum and no reduction, a batch with no label under each reduction, banned (-inf)
    teacher classes, alpha 0 and 1, large logits, and an unknown reduction and a zero temperature. Each gives the
    loss and the arguments as the caller holds them afterwards."""
    rng = np.random.default_rng(141)

    def config(temperature=2.0, alpha=0.7, scale_by_t2=True, ignore_index=-100, reduction="mean"):
        return SimpleNamespace(distill=SimpleNamespace(temperature=temperature, alpha=alpha, scale_by_t2=scale_by_t2,
                                                       ignore_index=ignore_index, reduction=reduction))

    flat_s, flat_t = 2.0 * rng.normal(size=(6, 5)), 2.0 * rng.normal(size=(6, 5))
    flat_y = np.array([1, 4, -100, 0, 2, -100])
    seq_s, seq_t = 1.5 * rng.normal(size=(3, 4, 7)), 1.5 * rng.normal(size=(3, 4, 7))
    seq_y = np.array([[3, 6, 0, -100], [1, -100, -100, -100], [2, 2, 5, 4]])
    minus_one = np.array([1, 4, -1, 0, 2, -1])
    nobody = np.full(6, -100)
    banned_t = flat_t.copy()
    banned_t[0, [1, 3]] = -np.inf
    banned_t[3, 0] = -np.inf
    cases: list[tuple[SimpleNamespace, np.ndarray, np.ndarray, np.ndarray]] = [
        (config(), flat_s, flat_t, flat_y),
        (config(), seq_s, seq_t, seq_y),
        (config(temperature=4.0, alpha=0.3, scale_by_t2=False), seq_s, seq_t, seq_y),
        (config(temperature=1.0, alpha=0.5), flat_s, flat_t, flat_y),
        (config(ignore_index=-1), flat_s, flat_t, minus_one),
        (config(reduction="sum"), seq_s, seq_t, seq_y),
        (config(temperature=3.0, reduction="none"), seq_s, seq_t, seq_y),
        (config(reduction="none", scale_by_t2=False), flat_s, flat_t, flat_y),
        (config(), flat_s, flat_t, nobody),
        (config(reduction="sum"), flat_s, flat_t, nobody),
        (config(reduction="none"), flat_s, flat_t, nobody),
        (config(temperature=2.5), flat_s, banned_t, flat_y),
        (config(alpha=0.0), flat_s, flat_t, flat_y),
        (config(alpha=1.0, temperature=0.5), seq_s, seq_t, seq_y),
        (config(), 400.0 * flat_s, 300.0 * flat_t, flat_y),
        (config(reduction="batchmean"), flat_s, flat_t, flat_y),
        (config(temperature=0.0), flat_s, flat_t, flat_y),
    ]
    calls: list[Callable[[], object]] = []
    for cfg, student, teacher, labels in cases:

        def call(cfg=cfg, student=student, teacher=teacher, labels=labels) -> object:
            held = student.copy(), teacher.copy(), labels.copy()
            return ns["Distiller"](cfg).loss(*held), held

        calls.append(call)
    return calls


# -- The Lion optimiser (Chen et al. 2023) ------------------------------------------------------------------------

LI_HEAD = '''class Lion:
    """The Lion optimiser ("Symbolic Discovery of Optimization Algorithms") over a list of numpy parameters, which
    ``step`` updates in place (the very arrays of ``self.params``). ``self.exp_avg`` holds each parameter's
    momentum, in the parameters' order."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, maximize=False):
        if lr <= 0.0:
            raise ValueError(f"invalid learning rate {lr}")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"invalid betas {betas}")
        self.params = list(params)
        self.lr = lr
        self.betas = tuple(betas)
        self.weight_decay = weight_decay
        self.maximize = maximize
        self.exp_avg = [np.zeros_like(p, dtype=np.float64) for p in self.params]

    def step(self, grads):
'''
LI_BODY = '''        if len(grads) != len(self.params):
            raise ValueError(f"expected {len(self.params)} gradients, got {len(grads)}")
        beta1, beta2 = self.betas
        for p, g, m in zip(self.params, grads, self.exp_avg):
            if g is None:
                continue
            g = np.asarray(g, dtype=np.float64)
            if self.maximize:
                g = -g
            if self.weight_decay != 0.0:
                p *= 1.0 - self.lr * self.weight_decay
            update = np.sign(beta1 * m + (1.0 - beta1) * g)
            p -= self.lr * update
            m *= beta2
            m += (1.0 - beta2) * g
'''
LI_DOC = '''        """One Lion update of every parameter that has a gradient.

        ``grads``: a list with one entry per parameter, in ``self.params``' order (any other length raises
        ValueError): a gradient of the parameter's shape, or None for a parameter without one this step, which is
        skipped (neither it nor its momentum changes). The gradients are not changed. Settings, read from ``self``:
        ``lr``, ``betas`` (beta1, beta2), ``weight_decay`` and ``maximize``.

        For each parameter p with gradient g and momentum m (``self.exp_avg[i]``): g is negated when ``maximize``;
        p is multiplied by ``1 - lr * weight_decay`` (decoupled weight decay); the update is ``sign(beta1 * m + (1
        - beta1) * g)``, the sign of an exact zero being 0, with m as it was before this step; ``p -= lr *
        update``; then m becomes ``beta2 * m + (1 - beta2) * g``. Parameters and momenta are changed in place.
        Returns None.
        """
'''
LI_GOLDEN = "\n\n" + LI_HEAD + LI_DOC + LI_BODY
LI_DRIVER = '''"""Train a two-layer classifier with Lion: python train.py"""

import numpy as np

from lion.optim import Lion

N_FEATURES = 6
HIDDEN = 24
CLASSES = 4


def make_data(rng, n=1000):
    """Points labelled by which of four centres they are closest to, with noise."""
    centres = 2.0 * rng.normal(size=(CLASSES, N_FEATURES))
    y = rng.integers(0, CLASSES, size=n)
    x = centres[y] + rng.normal(size=(n, N_FEATURES))
    return x, y


def forward_backward(params, x, y):
    w1, b1, w2, b2 = params
    pre = x @ w1 + b1
    h = np.tanh(pre)
    logits = h @ w2 + b2
    logits = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    loss = float(-np.mean(np.log(probs[np.arange(len(y)), y])))
    d_logits = probs.copy()
    d_logits[np.arange(len(y)), y] -= 1.0
    d_logits /= len(y)
    d_h = d_logits @ w2.T * (1.0 - h * h)
    grads = [x.T @ d_h, d_h.sum(axis=0), h.T @ d_logits, d_logits.sum(axis=0)]
    accuracy = float(np.mean(probs.argmax(axis=1) == y))
    return loss, accuracy, grads


def main():
    rng = np.random.default_rng(0)
    x, y = make_data(rng)
    params = [rng.normal(scale=0.4, size=(N_FEATURES, HIDDEN)), np.zeros(HIDDEN),
              rng.normal(scale=0.2, size=(HIDDEN, CLASSES)), np.zeros(CLASSES)]
    optimizer = Lion(params, lr=3e-3, weight_decay=0.1)
    for step in range(1, 301):
        idx = rng.choice(len(x), size=64, replace=False)
        _, _, grads = forward_backward(params, x[idx], y[idx])
        optimizer.step(grads)
        if step % 50 == 0:
            loss, accuracy, _ = forward_backward(params, x, y)
            norms = ", ".join(f"{np.linalg.norm(p):.3f}" for p in params)
            print(f"step {step}: loss {loss:.4f}, accuracy {accuracy:.3f}, parameter norms {norms}")


if __name__ == "__main__":
    main()
'''

_li = editor(LI_HEAD, LI_BODY)

LI_WRONG = {
    "betas swapped": _li("update = np.sign(beta1 * m + (1.0 - beta1) * g)",
                         "update = np.sign(beta2 * m + (1.0 - beta2) * g)").replace(
        '''            m *= beta2
            m += (1.0 - beta2) * g
''', '''            m *= beta1
            m += (1.0 - beta1) * g
'''),
    "momentum stored as the interpolation": _li('''            update = np.sign(beta1 * m + (1.0 - beta1) * g)
            p -= self.lr * update
            m *= beta2
            m += (1.0 - beta2) * g
''', '''            m *= beta1
            m += (1.0 - beta1) * g
            p -= self.lr * np.sign(m)
'''),
    "momentum refreshed before the sign": _li('''            update = np.sign(beta1 * m + (1.0 - beta1) * g)
            p -= self.lr * update
            m *= beta2
            m += (1.0 - beta2) * g
''', '''            m *= beta2
            m += (1.0 - beta2) * g
            update = np.sign(beta1 * m + (1.0 - beta1) * g)
            p -= self.lr * update
'''),
    "weight decay not scaled by lr": _li("p *= 1.0 - self.lr * self.weight_decay", "p *= 1.0 - self.weight_decay"),
    "weight decay added to the gradient": _li('''            if self.weight_decay != 0.0:
                p *= 1.0 - self.lr * self.weight_decay
''', '''            if self.weight_decay != 0.0:
                g = g + self.weight_decay * p
'''),
    "maximize ignored": _li('''            if self.maximize:
                g = -g
''', ""),
    "sign of zero taken as +1": _li("update = np.sign(beta1 * m + (1.0 - beta1) * g)",
                                    "update = np.where(beta1 * m + (1.0 - beta1) * g >= 0, 1.0, -1.0)"),
    "parameters rebound, not updated in place": _li(
        "p *= 1.0 - self.lr * self.weight_decay", "p = p * (1.0 - self.lr * self.weight_decay)").replace(
        "p -= self.lr * update", "p = p - self.lr * update"),
    "momentum rebound, not stored": _li('''            m *= beta2
            m += (1.0 - beta2) * g
''', '''            m = beta2 * m + (1.0 - beta2) * g
'''),
    "missing gradient taken as zero": _li('''            if g is None:
                continue
''', '''            if g is None:
                g = np.zeros_like(p)
'''),
}
LI_RIGHT = {
    "by index, copyto": LI_HEAD + '''        if len(grads) != len(self.params):
            raise ValueError("one gradient per parameter")
        b1, b2 = self.betas
        for i in range(len(self.params)):
            if grads[i] is None:
                continue
            grad = np.asarray(grads[i], dtype=float)
            if self.maximize:
                grad = -grad
            p = self.params[i]
            m = self.exp_avg[i]
            direction = np.sign(b1 * m + (1 - b1) * grad)
            np.copyto(p, p * (1.0 - self.lr * self.weight_decay) - self.lr * direction)
            np.copyto(m, b2 * m + (1 - b2) * grad)
''',
    "strict zip, three-way where, momenta replaced": LI_HEAD + '''        beta1, beta2 = self.betas
        lr, wd = self.lr, self.weight_decay
        for i, g in zip(range(len(self.params)), grads, strict=True):
            if g is None:
                continue
            g = np.asarray(g, dtype=np.float64) * (-1.0 if self.maximize else 1.0)
            m = self.exp_avg[i]
            c = beta1 * m + (1.0 - beta1) * g
            step = np.where(c > 0, 1.0, np.where(c < 0, -1.0, 0.0))
            p = self.params[i]
            if wd:
                p *= 1.0 - lr * wd
            p -= lr * step
            self.exp_avg[i] = beta2 * m + (1.0 - beta2) * g
''',
}


def li_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a few steps on general settings: the defaults; a learning rate and weight decay of their own; other
    betas; ``maximize``; gradients that are exactly zero on the first step (a sign of zero) and on a later one;
    None for some parameters on some steps; a list of the wrong length. Each gives, after every step, the
    caller's parameter arrays, the momenta and the gradients as the caller holds them."""
    rng = np.random.default_rng(142)
    calls: list[Callable[[], object]] = []
    shapes = [(3, 4), (4,), (2, 2)]
    for kwargs, steps, zero_steps, missing in (
            ({}, 3, (), {}),
            ({"lr": 0.05, "weight_decay": 0.3}, 4, (), {}),
            ({"lr": 0.01, "betas": (0.5, 0.8)}, 4, (), {}),
            ({"lr": 0.02, "maximize": True, "weight_decay": 0.1}, 4, (), {}),
            ({"lr": 0.1}, 3, (0, 2), {}),
            ({"lr": 0.05, "weight_decay": 0.2, "betas": (0.7, 0.95)}, 4, (), {1: (0,), 2: (1, 2), 3: (0,)}),
            ({"lr": 0.05}, 2, (), {1: "short"})):
        init = [rng.normal(size=shape) for shape in shapes]
        grads_seq = [[2.0 * rng.normal(size=shape) for shape in shapes] for _ in range(steps)]

        def call(kwargs=kwargs, steps=steps, zero_steps=zero_steps, missing=missing, init=init,
                 grads_seq=grads_seq) -> object:
            params = [p.copy() for p in init]
            opt = ns["Lion"](params, **kwargs)
            trace = []
            for s in range(steps):
                grads: list[Any] = [np.zeros(shape) if s in zero_steps else g.copy()
                                    for shape, g in zip(shapes, grads_seq[s], strict=True)]
                gone = missing.get(s, ())
                if gone == "short":
                    grads = grads[:-1]
                else:
                    for j in gone:
                        grads[j] = None
                try:
                    opt.step(grads)
                except ValueError:
                    trace.append("raised")
                    continue
                trace.append(([p.copy() for p in params], [m.copy() for m in opt.exp_avg],
                              [None if g is None else g.copy() for g in grads]))
            return trace

        calls.append(call)
    return calls


# -- MoCo's contrastive loss over a queue of negative keys (He et al. 2020) ---------------------------------------

MC_HEAD = '''class MoCoQueue:
    """The dictionary of negative keys of MoCo ("Momentum Contrast for Unsupervised Visual Representation
    Learning"): ``self.queue``, (K, dim), the keys of past batches, the oldest overwritten first, from row
    ``self.ptr`` on."""

    def __init__(self, dim, size=4096, temperature=0.07, normalize=True, eps=1e-12, seed=0):
        rng = np.random.default_rng(seed)
        queue = rng.normal(size=(size, dim))
        self.queue = queue / np.linalg.norm(queue, axis=1, keepdims=True)
        self.ptr = 0
        self.temperature = temperature
        self.normalize = normalize
        self.eps = eps

    def loss_and_enqueue(self, q, k):
'''
MC_BODY = '''        q = np.asarray(q, dtype=np.float64)
        k = np.asarray(k, dtype=np.float64)
        size = self.queue.shape[0]
        batch = q.shape[0]
        if batch > size:
            raise ValueError(f"a batch of {batch} keys does not fit a queue of {size}")
        if self.normalize:
            q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), self.eps)
            k = k / np.maximum(np.linalg.norm(k, axis=1, keepdims=True), self.eps)
        l_pos = np.sum(q * k, axis=1, keepdims=True)
        l_neg = q @ self.queue.T
        logits = np.concatenate([l_pos, l_neg], axis=1) / self.temperature
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_prob_pos = shifted[:, 0] - np.log(np.exp(shifted).sum(axis=1))
        loss = float(-log_prob_pos.mean())
        accuracy = float(np.mean(np.argmax(logits, axis=1) == 0))
        rows = (self.ptr + np.arange(batch)) % size
        self.queue[rows] = k
        self.ptr = int((self.ptr + batch) % size)
        return loss, accuracy
'''
MC_DOC = '''        """The contrastive (InfoNCE) loss of a batch of queries against their keys and the queue, then the
        batch's keys enqueued.

        ``q`` and ``k``: float arrays (N, dim), N >= 1, the queries and their positive keys (row i of k is the
        positive of row i of q); N larger than the queue's K raises ValueError. Settings, read from ``self``:
        ``temperature``, ``normalize`` and ``eps``.

        When ``normalize``, each row of q and of k is divided by ``max(||row||, eps)`` (a zero row stays zero).
        The logits of query i are its positive ``q_i . k_i`` followed by its negatives ``q_i . queue_j`` for the
        K rows of the queue as it was before this call, all divided by ``temperature``; the loss is the mean over
        the batch of the cross-entropy with the positive as the target (computed stably); the accuracy is the
        share of queries whose positive logit is at least every negative one.

        Then the keys (normalised when ``normalize``) are written into ``self.queue``, in place, at rows ``ptr,
        ptr + 1, ...`` modulo K (wrapping around to row 0), and ``self.ptr`` becomes ``(ptr + N) % K``. Returns
        ``(loss, accuracy)``, two floats. ``q`` and ``k`` are not changed.
        """
'''
MC_GOLDEN = "\n\n" + MC_HEAD + MC_DOC + MC_BODY
MC_DRIVER = '''"""Watch MoCo's contrastive loss while a toy query encoder trains and the key encoder follows it by
momentum: python pretrain.py"""

import numpy as np

from moco.queue import MoCoQueue

DIM_IN = 12
DIM_OUT = 8
QUEUE = 256
BATCH = 32
STEPS = 80
MOMENTUM = 0.99
N_CLUSTERS = 10


def augment(rng, x):
    return x * rng.uniform(0.8, 1.2, size=(len(x), 1)) + 0.3 * rng.normal(size=x.shape)


def main():
    rng = np.random.default_rng(0)
    centres = 2.0 * rng.normal(size=(N_CLUSTERS, DIM_IN))
    w_good = np.linalg.qr(rng.normal(size=(DIM_IN, DIM_IN)))[0][:, :DIM_OUT]
    w_q = rng.normal(scale=DIM_IN ** -0.5, size=(DIM_IN, DIM_OUT))
    w_k = w_q.copy()
    head = MoCoQueue(DIM_OUT, size=QUEUE)
    for step in range(1, STEPS + 1):
        x = centres[rng.integers(0, N_CLUSTERS, size=BATCH)] + 0.5 * rng.normal(size=(BATCH, DIM_IN))
        q = np.tanh(augment(rng, x) @ w_q)
        k = np.tanh(augment(rng, x) @ w_k)
        loss, accuracy = head.loss_and_enqueue(q, k)
        w_q += 0.05 * (w_good - w_q)  # stands in for the optimiser's step on the query encoder
        w_k = MOMENTUM * w_k + (1.0 - MOMENTUM) * w_q
        if step % 10 == 0:
            print(f"step {step}: loss {loss:.4f}, top-1 {accuracy:.3f}, queue pointer {head.ptr}")


if __name__ == "__main__":
    main()
'''

_mc = editor(MC_HEAD, MC_BODY)
_MC_NORM = '''            q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), self.eps)
            k = k / np.maximum(np.linalg.norm(k, axis=1, keepdims=True), self.eps)
'''
_MC_ENQUEUE = '''        rows = (self.ptr + np.arange(batch)) % size
        self.queue[rows] = k
        self.ptr = int((self.ptr + batch) % size)
'''

MC_WRONG = {
    "pointer not wrapped part way": _mc(_MC_ENQUEUE, '''        self.queue[self.ptr:self.ptr + batch] = k
        self.ptr = int((self.ptr + batch) % size)
'''),
    "wrapping batch restarts at row 0": _mc(_MC_ENQUEUE, '''        if self.ptr + batch > size:
            self.ptr = 0
        self.queue[self.ptr:self.ptr + batch] = k
        self.ptr = int((self.ptr + batch) % size)
'''),
    "pointer advanced by one": _mc("self.ptr = int((self.ptr + batch) % size)",
                                   "self.ptr = int((self.ptr + 1) % size)"),
    "keys enqueued unnormalised": _mc(_MC_NORM.split("\n")[1] + '''
        l_pos = np.sum(q * k, axis=1, keepdims=True)
''', '''            k_unit = k / np.maximum(np.linalg.norm(k, axis=1, keepdims=True), self.eps)
        else:
            k_unit = k
        l_pos = np.sum(q * k_unit, axis=1, keepdims=True)
'''),
    "queue updated before the loss": MC_HEAD + MC_BODY.replace(_MC_ENQUEUE, "").replace(
        "        l_pos = np.sum(q * k, axis=1, keepdims=True)\n",
        _MC_ENQUEUE + "        l_pos = np.sum(q * k, axis=1, keepdims=True)\n"),
    "temperature on the negatives only": _mc(
        "logits = np.concatenate([l_pos, l_neg], axis=1) / self.temperature",
        "logits = np.concatenate([l_pos, l_neg / self.temperature], axis=1)"),
    "target taken as the batch index": _mc(
        "log_prob_pos = shifted[:, 0] - np.log(np.exp(shifted).sum(axis=1))",
        "log_prob_pos = shifted[np.arange(batch), np.arange(batch)] - np.log(np.exp(shifted).sum(axis=1))"),
    "normalize flag ignored": _mc("        if self.normalize:\n" + _MC_NORM,
                                  _MC_NORM.replace("            ", "        ")),
    "zero vectors not guarded": _mc(_MC_NORM, '''            q = q / np.linalg.norm(q, axis=1, keepdims=True)
            k = k / np.linalg.norm(k, axis=1, keepdims=True)
'''),
    "ties counted against the positive": _mc(
        "accuracy = float(np.mean(np.argmax(logits, axis=1) == 0))",
        "accuracy = float(np.mean(logits[:, 0] > logits[:, 1:].max(axis=1)))"),
}
MC_RIGHT = {
    "query by query with math": MC_HEAD + '''        import math

        qs = np.array(q, dtype=float)
        ks = np.array(k, dtype=float)
        K = len(self.queue)
        n = len(qs)
        if n > K:
            raise ValueError("batch larger than the queue")
        if self.normalize:
            for rows in (qs, ks):
                for i in range(n):
                    norm = math.sqrt(float(np.dot(rows[i], rows[i])))
                    rows[i] = rows[i] / max(norm, self.eps)
        total, hits = 0.0, 0
        for i in range(n):
            pos = float(np.dot(qs[i], ks[i])) / self.temperature
            negs = (self.queue @ qs[i]) / self.temperature
            top = max(pos, float(negs.max()))
            lse = top + math.log(math.exp(pos - top) + float(np.exp(negs - top).sum()))
            total += lse - pos
            hits += int(pos >= negs.max())
        for j in range(n):
            self.queue[(self.ptr + j) % K] = ks[j]
        self.ptr = (self.ptr + n) % K
        return total / n, hits / n
''',
    "einsum and logaddexp": MC_HEAD + '''        q = np.asarray(q, dtype=np.float64)
        k = np.asarray(k, dtype=np.float64)
        K, n = self.queue.shape[0], q.shape[0]
        if n > K:
            raise ValueError("the queue is smaller than the batch")

        def unit(x):
            if not self.normalize:
                return x
            lengths = np.sqrt(np.einsum("ij,ij->i", x, x))[:, None]
            return x / np.where(lengths > self.eps, lengths, self.eps)

        q, k = unit(q), unit(k)
        pos = np.einsum("ij,ij->i", q, k) / self.temperature
        neg = np.einsum("ij,kj->ik", q, self.queue) / self.temperature
        lse = np.logaddexp(pos, np.logaddexp.reduce(neg, axis=1))
        loss = float(np.mean(lse - pos))
        acc = float(np.mean(pos >= neg.max(axis=1)))
        idx = np.arange(self.ptr, self.ptr + n) % K
        self.queue[idx] = k
        self.ptr = int((self.ptr + n) % K)
        return loss, acc
''',
}


def mc_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a few batches on general queues: a queue that is a multiple of the batch (the pointer back at 0),
    batches that wrap part way round, another temperature, the normalisation off with keys of other lengths, a
    zero query and a zero key, a batch as large as the queue, equal positive and negative logits (a tie), and a
    batch larger than the queue. Each gives, after every batch, the loss and accuracy, the queue array the caller
    held before the calls, the pointer, and the inputs as the caller holds them."""
    rng = np.random.default_rng(143)
    calls: list[Callable[[], object]] = []
    for kwargs, settings, batches in (
            ({"dim": 5, "size": 12}, {}, [4, 4, 4, 4]),
            ({"dim": 5, "size": 12, "seed": 3}, {}, [5, 5, 5, 2]),
            ({"dim": 4, "size": 9, "temperature": 0.2}, {}, [4, 4, 4]),
            ({"dim": 4, "size": 10}, {"normalize": False}, [3, 4, 6]),
            ({"dim": 3, "size": 8}, {"temperature": 0.5}, ["zero", 3]),
            ({"dim": 3, "size": 6}, {"temperature": 0.1}, [6, 6]),
            ({"dim": 3, "size": 4}, {"normalize": False, "temperature": 1.0}, ["tie"]),
            ({"dim": 3, "size": 5}, {}, [6])):
        data = [(1.5 * rng.normal(size=(b, kwargs["dim"])), 1.5 * rng.normal(size=(b, kwargs["dim"])))
                for b in batches if isinstance(b, int)]

        def call(kwargs=kwargs, settings=settings, batches=batches, data=data) -> object:
            head = ns["MoCoQueue"](**kwargs)
            for key, value in settings.items():
                setattr(head, key, value)
            held_queue = head.queue
            trace = []
            feed = iter(data)
            for b in batches:
                if b == "zero":
                    q = _zero_row_batch(kwargs["dim"], 0)
                    k = _zero_row_batch(kwargs["dim"], 1)
                elif b == "tie":
                    head.queue[:] = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
                    q = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
                    k = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
                else:
                    q, k = (x.copy() for x in next(feed))
                try:
                    out = head.loss_and_enqueue(q, k)
                except ValueError:
                    out = "raised"
                trace.append((out, held_queue.copy(), head.ptr, q.copy(), k.copy()))
            return trace

        calls.append(call)
    return calls


def _zero_row_batch(dim: int, which: int) -> np.ndarray:
    """Three rows of a fixed batch, one of them zero: the query's second row when ``which`` is 0, the key's
    first when 1."""
    rows = np.array([[0.5, -1.0, 2.0, 0.3, 1.1][:dim], [1.5, 0.2, -0.7, 0.9, -0.4][:dim],
                     [-0.3, 0.8, 0.6, -1.2, 0.5][:dim]])
    rows[1 - which] = 0.0
    return rows


# -- The adaptive KL controller (Ziegler et al. 2019) --------------------------------------------------------------

KL_HEAD = '''class AdaptiveKLController:
    """The adaptive coefficient of the KL penalty of "Fine-Tuning Language Models from Human Preferences": raised
    when the policy's KL from the reference policy exceeds ``target``, lowered when it falls short, by a
    proportional controller whose error is clipped to ``[-clip, clip]``, at a rate set by ``horizon``.
    ``target`` None keeps the coefficient fixed; ``min_coef`` and ``max_coef``, when set, bound it."""

    def __init__(self, init_kl_coef=0.2, target=6.0, horizon=10000, clip=0.2, min_coef=None, max_coef=None):
        self.value = init_kl_coef
        self.target = target
        self.horizon = horizon
        self.clip = clip
        self.min_coef = min_coef
        self.max_coef = max_coef

    def update(self, current_kl, n_steps):
'''
KL_BODY = '''        if self.target is None:
            return self.value
        kl = float(np.mean(current_kl))
        if not np.isfinite(kl):
            return self.value
        proportional_error = np.clip(kl / self.target - 1.0, -self.clip, self.clip)
        mult = 1.0 + proportional_error * n_steps / self.horizon
        value = self.value * mult
        if self.min_coef is not None:
            value = max(value, self.min_coef)
        if self.max_coef is not None:
            value = min(value, self.max_coef)
        self.value = float(value)
        return self.value
'''
KL_DOC = '''        """Update the coefficient from the KL measured on the last batch, once per step.

        ``current_kl``: the KL estimate, a float or an array of per-sample estimates (its mean is taken);
        ``n_steps``: the number of samples (or tokens) the step saw. Settings, read from ``self``: ``target``,
        ``horizon``, ``clip``, ``min_coef`` and ``max_coef``.

        When ``target`` is None the coefficient is fixed: nothing changes. When the mean KL is not finite (NaN,
        infinite, or the mean of an empty array) nothing changes either. Otherwise the proportional error ``KL /
        target - 1`` is clipped to ``[-clip, clip]``, ``self.value`` is multiplied by ``1 + error * n_steps /
        horizon``, then raised to ``min_coef`` and lowered to ``max_coef`` where they are not None, and stored as
        a float. Returns ``self.value``. ``current_kl`` is not changed.
        """
'''
KL_GOLDEN = "\n\n" + KL_HEAD + KL_DOC + KL_BODY
KL_DRIVER = '''"""RLHF on a toy bandit: a softmax policy over canned responses, a reward model, and a KL penalty to the
reference policy whose coefficient the adaptive controller tunes: python train_rlhf.py"""

import numpy as np

from rlhf.kl_control import AdaptiveKLController

N_RESPONSES = 20
BATCH = 64
STEPS = 200
LR = 0.5


def softmax(logits):
    e = np.exp(logits - logits.max())
    return e / e.sum()


def main():
    rng = np.random.default_rng(0)
    ref_logits = rng.normal(size=N_RESPONSES)
    reward_model = rng.normal(size=N_RESPONSES)
    logits = ref_logits.copy()
    kl_ctl = AdaptiveKLController(init_kl_coef=0.1, target=0.5, horizon=2000)
    ref = softmax(ref_logits)
    for step in range(1, STEPS + 1):
        probs = softmax(logits)
        actions = rng.choice(N_RESPONSES, size=BATCH, p=probs)
        log_ratio = np.log(probs[actions]) - np.log(ref[actions])
        kl = float(log_ratio.mean())
        shaped = reward_model[actions] - kl_ctl.value * log_ratio
        advantages = shaped - shaped.mean()
        grad = np.zeros(N_RESPONSES)
        for action, advantage in zip(actions, advantages):
            one_hot = np.zeros(N_RESPONSES)
            one_hot[action] = 1.0
            grad += advantage * (one_hot - probs)
        logits += LR * grad / BATCH
        kl_ctl.update(kl, BATCH)
        if step % 25 == 0:
            exact_kl = float(np.sum(probs * (np.log(probs) - np.log(ref))))
            print(f"step {step}: reward {float(probs @ reward_model):.4f}, kl {exact_kl:.4f}, "
                  f"kl coef {kl_ctl.value:.5f}")


if __name__ == "__main__":
    main()
'''

_kl = editor(KL_HEAD, KL_BODY)
_KL_ERROR = "np.clip(kl / self.target - 1.0, -self.clip, self.clip)"

KL_WRONG = {
    "pins clip": _kl(_KL_ERROR, "np.clip(kl / self.target - 1.0, -0.2, 0.2)"),
    "error not clipped": _kl(_KL_ERROR, "kl / self.target - 1.0"),
    "error clipped from above only": _kl(_KL_ERROR,
                                         "np.minimum(kl / self.target - 1.0, self.clip)"),
    "absolute error, not relative": _kl(_KL_ERROR,
                                        "np.clip(kl - self.target, -self.clip, self.clip)"),
    "n_steps ignored": _kl("mult = 1.0 + proportional_error * n_steps / self.horizon",
                           "mult = 1.0 + proportional_error / self.horizon"),
    "fixed coefficient not handled": _kl('''        if self.target is None:
            return self.value
''', ""),
    "bounds ignored": _kl('''        if self.min_coef is not None:
            value = max(value, self.min_coef)
        if self.max_coef is not None:
            value = min(value, self.max_coef)
''', ""),
    "non-finite KL not guarded": _kl('''        if not np.isfinite(kl):
            return self.value
''', ""),
    "per-sample KLs summed": _kl("kl = float(np.mean(current_kl))", "kl = float(np.sum(current_kl))"),
    "coefficient not stored": _kl('''        self.value = float(value)
        return self.value
''', '''        return float(value)
'''),
}
KL_RIGHT = {
    "plain floats and ifs": KL_HEAD + '''        import math

        if self.target is None:
            return self.value
        values = np.asarray(current_kl, dtype=float).ravel().tolist()
        kl = sum(values) / len(values) if values else math.nan
        if math.isnan(kl) or math.isinf(kl):
            return self.value
        error = kl / self.target - 1.0
        error = max(-self.clip, min(self.clip, error))
        new = self.value * (1.0 + error * n_steps / self.horizon)
        if self.min_coef is not None and new < self.min_coef:
            new = self.min_coef
        if self.max_coef is not None and new > self.max_coef:
            new = self.max_coef
        self.value = float(new)
        return self.value
''',
    "bounds as infinities, np.clip": KL_HEAD + '''        if self.target is None:
            return self.value
        arr = np.atleast_1d(np.asarray(current_kl, dtype=np.float64))
        kl = arr.mean() if arr.size else np.nan
        if not np.isfinite(kl):
            return self.value
        lo = -np.inf if self.min_coef is None else self.min_coef
        hi = np.inf if self.max_coef is None else self.max_coef
        err = min(max(kl / self.target - 1.0, -self.clip), self.clip)
        self.value = float(np.clip(self.value * (1.0 + err * n_steps / self.horizon), lo, hi))
        return self.value
''',
}


def kl_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of updates on general settings: the defaults with KLs inside and outside the clip on both sides;
    another clip and horizon; no target; bounds reached from above and below; per-sample arrays, flat and 2-D;
    NaN, infinite and empty KLs; a negative KL estimate; steps of other sizes. Each gives every value returned,
    the stored coefficient after each update, and the KLs as the caller holds them."""
    calls: list[Callable[[], object]] = []
    for kwargs, updates in (
            ({}, [(6.5, 512), (7.0, 512), (12.0, 512), (3.0, 512), (0.0, 512), (5.9, 512)]),
            ({"init_kl_coef": 0.1, "target": 1.0, "horizon": 100, "clip": 0.5},
             [(1.3, 10), (0.2, 10), (30.0, 10), (1.1, 40), (0.9, 5)]),
            ({"target": None, "init_kl_coef": 0.05}, [(10.0, 100), (0.0, 100), (np.array([1.0, 2.0]), 3)]),
            ({"init_kl_coef": 0.2, "target": 2.0, "horizon": 50, "min_coef": 0.1, "max_coef": 0.3},
             [(8.0, 100), (8.0, 100), (0.0, 100), (0.0, 100), (0.0, 100), (2.2, 100)]),
            ({"init_kl_coef": 0.3, "target": 0.5, "horizon": 200},
             [(np.array([0.2, 0.9, 0.5, 0.7]), 4), (np.array([[0.1, 0.3], [0.2, 0.4]]), 4),
              (np.array([0.6]), 1)]),
            ({"init_kl_coef": 0.3, "target": 0.5, "horizon": 200},
             [(float("nan"), 64), (np.array([]), 64), (np.inf, 64), (0.55, 64), (np.array([0.4, np.nan]), 64)]),
            ({"init_kl_coef": 0.2, "target": 0.5, "horizon": 1000, "clip": 0.3},
             [(-0.3, 256), (0.62, 1000), (0.45, 1), (0.4, 7)])):

        def call(kwargs=kwargs, updates=updates) -> object:
            ctl = ns["AdaptiveKLController"](**kwargs)
            trace = []
            for kl, n in updates:
                held = np.array(kl, dtype=np.float64) if isinstance(kl, np.ndarray) else kl
                returned = ctl.update(held, n)
                trace.append((returned, ctl.value, held))
            return trace

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "56-DistillationLoss", "files": {"kd/__init__.py": "", "kd/config.py": KD_CONFIG, "kd/distill.py":
     '"""Knowledge distillation of a tagger."""\n\nimport numpy as np\n' + KD_GOLDEN,
     "evaluate_students.py": KD_DRIVER},
     "function": "kd/distill.py::Distiller.loss", "command": "python evaluate_students.py",
     "head": _NP, "wrong": KD_WRONG, "right": KD_RIGHT, "check": kd_check,
     "gaps": {"T squared scaling always on": ["scale_by_t2"],
              "KL taken the other way": ["p_teacher * (log_p_teacher - log_p_student)"],
              "teacher not softened": ["log_softmax(teacher / t)"],
              "hard term at the temperature": ["log_probs = log_softmax(student)"],
              "pins ignore_index": ["ignore_index"],
              "soft term kept at ignored positions": [
                  "np.where(valid, d.alpha * soft + (1.0 - d.alpha) * hard, 0.0)"],
              "mean over every position": ["count = int(valid.sum())"],
              "banned teacher classes not guarded": ["np.where(p_teacher > 0"],
              "batch with no label not guarded": ["if count else 0.0"],
              "reduction none keeps the labelled positions only": ["reduction", "return per_position"]}},
    {"name": "57-LionStep", "files": {"lion/__init__.py": "", "lion/optim.py":
     '"""Sign-based optimisers."""\n\nimport numpy as np\n' + LI_GOLDEN, "train.py": LI_DRIVER},
     "function": "lion/optim.py::Lion.step", "command": "python train.py",
     "head": _NP, "wrong": LI_WRONG, "right": LI_RIGHT, "check": li_check,
     "gaps": {"betas swapped": ["betas", "beta1 * m + (1.0 - beta1) * g", "m *= beta2"],
              "momentum stored as the interpolation": ["update = np.sign(beta1 * m + (1.0 - beta1) * g)",
                                                       "m *= beta2"],
              "momentum refreshed before the sign": ["update = np.sign(beta1 * m + (1.0 - beta1) * g)",
                                                     "m *= beta2"],
              "weight decay not scaled by lr": ["weight_decay", "p *= 1.0 - self.lr * self.weight_decay"],
              "weight decay added to the gradient": ["weight_decay", "p *= 1.0 - self.lr * self.weight_decay"],
              "maximize ignored": ["maximize"],
              "sign of zero taken as +1": ["np.sign(beta1 * m + (1.0 - beta1) * g)"],
              "parameters rebound, not updated in place": ["p -= self.lr * update",
                                                           "p *= 1.0 - self.lr * self.weight_decay"],
              "momentum rebound, not stored": ["exp_avg", "m *= beta2", "m += (1.0 - beta2) * g"],
              "missing gradient taken as zero": ["grads", "if g is None:"]}},
    {"name": "58-MoCoQueueLoss", "files": {"moco/__init__.py": "", "moco/queue.py":
     '"""Momentum contrast: the queue of negative keys and its loss."""\n\nimport numpy as np\n' + MC_GOLDEN,
     "pretrain.py": MC_DRIVER},
     "function": "moco/queue.py::MoCoQueue.loss_and_enqueue", "command": "python pretrain.py",
     "head": _NP, "wrong": MC_WRONG, "right": MC_RIGHT, "check": mc_check,
     "gaps": {"pointer not wrapped part way": ["rows = (self.ptr + np.arange(batch)) % size"],
              "wrapping batch restarts at row 0": ["rows = (self.ptr + np.arange(batch)) % size"],
              "pointer advanced by one": ["ptr", "self.ptr = int((self.ptr + batch) % size)"],
              "keys enqueued unnormalised": ["self.queue[rows] = k"],
              "queue updated before the loss": ["l_neg = q @ self.queue.T", "self.queue[rows] = k"],
              "temperature on the negatives only": ["temperature",
                                                    "np.concatenate([l_pos, l_neg], axis=1) / self.temperature"],
              "target taken as the batch index": ["shifted[:, 0]"],
              "normalize flag ignored": ["normalize", "if self.normalize:"],
              "zero vectors not guarded": ["eps", "np.maximum(np.linalg.norm(q, axis=1, keepdims=True), self.eps)"],
              "ties counted against the positive": ["np.argmax(logits, axis=1) == 0"]}},
    {"name": "59-AdaptiveKLController", "files": {"rlhf/__init__.py": "", "rlhf/kl_control.py":
     '"""Controllers of the KL penalty coefficient."""\n\nimport numpy as np\n' + KL_GOLDEN,
     "train_rlhf.py": KL_DRIVER},
     "function": "rlhf/kl_control.py::AdaptiveKLController.update", "command": "python train_rlhf.py",
     "head": _NP, "wrong": KL_WRONG, "right": KL_RIGHT, "check": kl_check,
     "gaps": {"pins clip": ["clip"],
              "error not clipped": ["clip", "np.clip(kl / self.target - 1.0, -self.clip, self.clip)"],
              "error clipped from above only": ["clip", "np.clip(kl / self.target - 1.0, -self.clip, self.clip)"],
              "absolute error, not relative": ["kl / self.target - 1.0"],
              "n_steps ignored": ["n_steps"],
              "fixed coefficient not handled": ["target", "if self.target is None:"],
              "bounds ignored": ["min_coef", "max_coef"],
              "non-finite KL not guarded": ["if not np.isfinite(kl):"],
              "per-sample KLs summed": ["current_kl", "np.mean(current_kl)"],
              "coefficient not stored": ["self.value = float(value)"]}},
]
"""The fourteenth fresh held-out tasks."""
