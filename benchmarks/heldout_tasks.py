"""Held-out numpy tasks for ``wrong_answers.py --set heldout``: five shapes from papers that neither the main set
nor any test fixture has (GRPO's group-normalised advantages with a zero-std guard, a momentum teacher whose EMA
follows a cosine schedule and changes ``self``, InfoNCE with its temperature in a nested config dict, a
label-smoothed causal-LM loss whose smoothing factor a trainer helper reads from ``self.args``, SwAV's Sinkhorn
normalisation with an epsilon and a round count). Written for this benchmark alone and kept out of tests/, so that
no rule of the recorder is tuned on them: the measure of shapes no one listed.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

GRPO_GOLDEN = '''

def grpo_advantages(rewards, group_size, scale_rewards=True, eps=1e-4):
    """Group-relative advantages of GRPO (Shao et al. 2024). ``rewards`` (n,) score n = groups * group_size
    completions, each run of ``group_size`` consecutive ones answering the same prompt. A completion's advantage
    is its reward minus its group's mean, divided by the group's sample standard deviation (ddof 1) plus ``eps``
    when ``scale_rewards``. A group whose standard deviation is 0 (all rewards equal, or a group of one) gets
    advantage 0 whatever ``eps``. Returns (n,)."""
    grouped = np.asarray(rewards, dtype=np.float64).reshape(-1, group_size)
    centred = grouped - grouped.mean(axis=1, keepdims=True)
    if group_size > 1:
        std = grouped.std(axis=1, ddof=1, keepdims=True)
    else:
        std = np.zeros((grouped.shape[0], 1))
    if scale_rewards:
        centred = centred / (std + eps)
    centred = np.where(std > 0, centred, 0.0)
    return centred.reshape(-1)
'''
GRPO_DRIVER = '''"""Score sampled answers to toy arithmetic prompts and weigh them for a GRPO step: python train.py"""

import numpy as np

from grpo.advantages import grpo_advantages

NUM_GENERATIONS = 4


def main():
    rng = np.random.default_rng(0)
    for step in range(3):
        skill = rng.uniform(0.2, 0.9, size=6)
        correct = rng.random((6, NUM_GENERATIONS)) < skill[:, None]
        rewards = correct.astype(np.float64).reshape(-1) + 0.1 * rng.random(6 * NUM_GENERATIONS)
        advantages = grpo_advantages(rewards, NUM_GENERATIONS)
        print(f"step {step}: mean |advantage| {np.abs(advantages).mean():.4f}")


if __name__ == "__main__":
    main()
'''
GR_SIG = "def grpo_advantages(rewards, group_size, scale_rewards=True, eps=1e-4):\n"
GR_BODY = '''    grouped = np.asarray(rewards, dtype=np.float64).reshape(-1, group_size)
    centred = grouped - grouped.mean(axis=1, keepdims=True)
    if group_size > 1:
        std = grouped.std(axis=1, ddof=1, keepdims=True)
    else:
        std = np.zeros((grouped.shape[0], 1))
    if scale_rewards:
        centred = centred / (std + eps)
    centred = np.where(std > 0, centred, 0.0)
    return centred.reshape(-1)
'''


_gr = editor(GR_SIG, GR_BODY)


GRPO_WRONG = {
    "population std": _gr("ddof=1", "ddof=0"),
    "always scaled": _gr("    if scale_rewards:\n        centred = centred", "    centred = centred"),
    "scale_rewards inverted": _gr("if scale_rewards:", "if not scale_rewards:"),
    "pins eps": GR_SIG + "    eps = 1e-4\n" + GR_BODY,
    "eps inside the square root": _gr("centred / (std + eps)", "centred / np.sqrt(std ** 2 + eps)"),
    "zero-std guard dropped": _gr("    centred = np.where(std > 0, centred, 0.0)\n", ""),
    "guard against eps": _gr("np.where(std > 0,", "np.where(std > eps,"),
    "statistics over the batch": _gr("grouped.mean(axis=1, keepdims=True)", "grouped.mean()").replace(
        "grouped.std(axis=1, ddof=1, keepdims=True)", "np.full((grouped.shape[0], 1), grouped.std(ddof=1))"),
    "groups strided": _gr("np.asarray(rewards, dtype=np.float64).reshape(-1, group_size)",
                          "np.asarray(rewards, dtype=np.float64).reshape(group_size, -1).T"),
    "not centred": _gr("centred = grouped - grouped.mean(axis=1, keepdims=True)", "centred = grouped.copy()"),
    "one row per group": _gr("return centred.reshape(-1)", "return centred"),
    "group of one keeps its reward": _gr("std = np.zeros((grouped.shape[0], 1))",
                                         "return np.asarray(rewards, dtype=np.float64)"),
}
GRPO_RIGHT = {
    "statistics module": GR_SIG + '''    out = []
    for start in range(0, len(rewards), group_size):
        group = [float(r) for r in rewards[start:start + group_size]]
        mean = statistics.fmean(group)
        spread = statistics.stdev(group) if len(group) > 1 else 0.0
        for r in group:
            if spread == 0:
                out.append(0.0)
            elif scale_rewards:
                out.append((r - mean) / (spread + eps))
            else:
                out.append(r - mean)
    return np.array(out)
''',
    "variance helper": GR_SIG + '''    r = np.reshape(rewards, (len(rewards) // group_size, group_size)).astype(float)
    spread = _sample_std(r)
    adv = r - r.mean(1)[:, None]
    if scale_rewards:
        adv /= spread[:, None] + eps
    adv[spread == 0] = 0.0
    return adv.ravel()


def _sample_std(r):
    n = r.shape[1]
    if n < 2:
        return np.zeros(r.shape[0])
    return np.sqrt(((r - r.mean(1, keepdims=True)) ** 2).sum(1) / (n - 1))
''',
    "masked division": GR_SIG + '''    g = np.asarray(rewards, dtype=float).reshape(-1, group_size)
    dev = g - g.mean(axis=-1, keepdims=True)
    sd = g.std(axis=-1, ddof=1, keepdims=True) if group_size > 1 else np.zeros_like(dev[:, :1])
    denom = sd + eps if scale_rewards else np.ones_like(sd)
    return np.divide(dev, denom, out=np.zeros_like(dev), where=sd > 0).reshape(-1)
''',
}
GRPO_GAPS = {
    "population std": ["ddof=1"], "always scaled": ["scale_rewards"], "scale_rewards inverted": ["scale_rewards"],
    "pins eps": ["eps"], "eps inside the square root": ["std + eps"], "zero-std guard dropped": ["std > 0"],
    "guard against eps": ["std > 0"], "statistics over the batch": ["axis=1"], "groups strided": ["reshape(-1"],
    "not centred": ["grouped.mean(axis=1, keepdims=True)"], "one row per group": ["reshape(-1)"],
    "group of one keeps its reward": ["group_size > 1"],
}


def grpo_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``grpo_advantages`` on general inputs: groups of 1-5, equal groups, tiny spreads, every option."""
    rng = np.random.default_rng(46)
    f = ns["grpo_advantages"]
    r1 = rng.normal(size=12)
    r2 = np.repeat(rng.random(3), 4) + np.r_[rng.normal(size=4), np.zeros(8)]
    tiny = 1e-5 * rng.normal(size=8)
    return [lambda: f(r1.copy(), 4), lambda: f(r1.copy(), 3, scale_rewards=False), lambda: f(r2.copy(), 4),
            lambda: f(r1.copy(), 1), lambda: f(r2.copy(), 4, eps=0.5), lambda: f(tiny.copy(), 2),
            lambda: f(r1.copy(), 6, eps=0.0), lambda: f(r2.copy(), 4, eps=0.0)]


EMA_GOLDEN = '''

class MomentumTeacher:
    """A teacher network kept as an exponential moving average of the student (BYOL, DINO), with a momentum
    that follows a cosine schedule from ``base_momentum`` at step 0 up to ``final_momentum`` at
    ``total_steps``."""

    def __init__(self, base_momentum=0.996, final_momentum=1.0, total_steps=1000):
        self.base_momentum = base_momentum
        self.final_momentum = final_momentum
        self.total_steps = total_steps
        self.step = 0

    def update(self, teacher, student):
        """One step: each array of ``teacher`` (a dict of name to array, changed in place) becomes
        ``m * teacher + (1 - m) * student`` for the array of the same name in ``student``, with ``m`` the
        momentum at the current step, ``final - (final - base) * (cos(pi * s / total_steps) + 1) / 2`` with
        s = min(step, total_steps); then the step advances. Returns ``m``."""
        progress = min(self.step, self.total_steps) / self.total_steps
        gap = self.final_momentum - self.base_momentum
        m = self.final_momentum - gap * (math.cos(math.pi * progress) + 1.0) / 2.0
        for name, param in teacher.items():
            param *= m
            param += (1.0 - m) * student[name]
        self.step += 1
        return m
'''
EMA_DRIVER = '''"""Self-distillation of a toy linear student into its momentum teacher: python pretrain.py"""

import numpy as np

from distill.teacher import MomentumTeacher

STEPS = 40


def main():
    rng = np.random.default_rng(0)
    student = {"w": rng.normal(size=(4, 3)), "b": np.zeros(3)}
    teacher = {name: value.copy() for name, value in student.items()}
    ema = MomentumTeacher(total_steps=STEPS)
    for step in range(STEPS):
        for name in student:
            student[name] -= 0.1 * rng.normal(size=student[name].shape)
        m = ema.update(teacher, student)
        if step % 10 == 0:
            print(f"step {step}: momentum {m:.5f}, gap {np.abs(teacher['w'] - student['w']).mean():.4f}")


if __name__ == "__main__":
    main()
'''
E_HEAD = '''class MomentumTeacher:
    def __init__(self, base_momentum=0.996, final_momentum=1.0, total_steps=1000):
        self.base_momentum = base_momentum
        self.final_momentum = final_momentum
        self.total_steps = total_steps
        self.step = 0

    def update(self, teacher, student):
'''
E_BODY = '''        progress = min(self.step, self.total_steps) / self.total_steps
        gap = self.final_momentum - self.base_momentum
        m = self.final_momentum - gap * (math.cos(math.pi * progress) + 1.0) / 2.0
        for name, param in teacher.items():
            param *= m
            param += (1.0 - m) * student[name]
        self.step += 1
        return m
'''


_ema = editor(E_HEAD, E_BODY)


EMA_WRONG = {
    "constant momentum": _ema("m = self.final_momentum - gap * (math.cos(math.pi * progress) + 1.0) / 2.0",
                              "m = self.base_momentum"),
    "schedule counted from 1": _ema("progress = min(self.step, self.total_steps)",
                                    "progress = min(self.step + 1, self.total_steps)"),
    "step never advances": _ema("        self.step += 1\n", ""),
    "weights swapped": _ema("            param *= m\n            param += (1.0 - m) * student[name]\n",
                            "            param *= 1.0 - m\n            param += m * student[name]\n"),
    "no clamp after the last step": _ema("min(self.step, self.total_steps)", "self.step"),
    "linear schedule": _ema("m = self.final_momentum - gap * (math.cos(math.pi * progress) + 1.0) / 2.0",
                            "m = self.base_momentum + gap * progress"),
    "pins final_momentum": _ema("gap = self.final_momentum - self.base_momentum",
                                "gap = 1.0 - self.base_momentum").replace("m = self.final_momentum", "m = 1.0"),
    "pins base_momentum": _ema("gap = self.final_momentum - self.base_momentum",
                               "gap = self.final_momentum - 0.996"),
    "cosine the wrong way": _ema("m = self.final_momentum - gap * (math.cos(math.pi * progress) + 1.0) / 2.0",
                                 "m = self.base_momentum + gap * (math.cos(math.pi * progress) + 1.0) / 2.0"),
    "total_steps less one": _ema("/ self.total_steps", "/ max(self.total_steps - 1, 1)"),
    "returns the next momentum": _ema("        self.step += 1\n        return m\n", '''        self.step += 1
        progress = min(self.step, self.total_steps) / self.total_steps
        return self.final_momentum - gap * (math.cos(math.pi * progress) + 1.0) / 2.0
'''),
    "teacher arrays replaced": _ema("            param *= m\n            param += (1.0 - m) * student[name]\n",
                                    "            teacher[name] = m * param + (1.0 - m) * student[name]\n"),
}
EMA_RIGHT = {
    "interpolation towards the student": E_HEAD + '''\
        s = self.step if self.step < self.total_steps else self.total_steps
        m = _cosine_momentum(s / self.total_steps, self.base_momentum, self.final_momentum)
        for name in sorted(teacher):
            target = student[name]
            teacher[name][...] = target + m * (teacher[name] - target)
        self.step = self.step + 1
        return m


def _cosine_momentum(fraction, low, high):
    return high - (high - low) * (1.0 + math.cos(math.pi * fraction)) / 2.0
''',
    "numpy in-place ufuncs": E_HEAD + '''        frac = np.clip(self.step / self.total_steps, 0.0, 1.0)
        m = float(self.base_momentum + (self.final_momentum - self.base_momentum) * (1 - np.cos(np.pi * frac)) / 2)
        for key, arr in teacher.items():
            np.multiply(arr, m, out=arr)
            np.add(arr, (1 - m) * student[key], out=arr)
        self.step += 1
        return m
''',
    "sine squared": E_HEAD + '''        progress = min(self.step / self.total_steps, 1.0)
        m = self.base_momentum + (self.final_momentum - self.base_momentum) * math.sin(math.pi * progress / 2) ** 2
        for name, value in student.items():
            teacher[name] -= (1.0 - m) * (teacher[name] - value)
        self.step += 1
        return m
''',
}
EMA_GAPS = {
    "constant momentum": ["math.cos(math.pi * progress)"], "schedule counted from 1": ["self.step"],
    "step never advances": ["self.step += 1"], "weights swapped": ["param *= m", "(1.0 - m) * student[name]"],
    "no clamp after the last step": ["min(self.step, self.total_steps)"],
    "linear schedule": ["math.cos(math.pi * progress)"], "pins final_momentum": ["final_momentum"],
    "pins base_momentum": ["base_momentum"], "cosine the wrong way": ["math.cos(math.pi * progress)"],
    "total_steps less one": ["total_steps"], "returns the next momentum": ["return m"],
    "teacher arrays replaced": ["param *= m"],
}


def ema_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of ``update`` over whole schedules (past the last step too), several momenta; each run's momenta and
    the teacher arrays after every step."""
    def run(kw: dict[str, Any], steps: int) -> list[object]:
        rng = np.random.default_rng(46)
        ema = ns["MomentumTeacher"](**kw)
        student = {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
        teacher = {k: v + rng.normal(size=v.shape) for k, v in student.items()}
        held = dict(teacher)  # the arrays a model holds: updated in place, never replaced
        out: list[object] = []
        for _ in range(steps):
            out.append(ema.update(teacher, student))
            out.append([held["w"].copy(), held["b"].copy()])
        return out
    return [lambda: run({"total_steps": 10}, 14), lambda: run({"base_momentum": 0.9, "total_steps": 6}, 8),
            lambda: run({"base_momentum": 0.5, "final_momentum": 0.8, "total_steps": 4}, 6)]


NCE_GOLDEN = '''

class ContrastiveHead:
    """The contrastive objective of a two-tower retriever, configured by a nested dict (read from YAML)."""

    def __init__(self, config):
        self.config = config

    def info_nce(self, queries, keys):
        """InfoNCE (van den Oord et al. 2018) of paired rows: ``queries[i]`` and ``keys[i]`` (batch, dim) are a
        positive pair, the other keys its negatives. Rows are L2-normalised (a norm below 1e-12 counts as
        1e-12); logits are ``q @ k.T / config["loss"]["temperature"]``; the loss is the cross-entropy with the
        diagonal as targets, averaged over rows, and, when ``config["loss"]["symmetric"]`` is true (false when
        absent), the mean of the query-to-key and key-to-query losses."""
        loss_cfg = self.config["loss"]
        temperature = loss_cfg["temperature"]
        q = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        k = keys / np.maximum(np.linalg.norm(keys, axis=1, keepdims=True), 1e-12)
        logits = q @ k.T / temperature
        loss = _diagonal_xent(logits)
        if loss_cfg.get("symmetric", False):
            loss = 0.5 * (loss + _diagonal_xent(logits.T))
        return loss


def _diagonal_xent(logits):
    """Mean cross-entropy of each row of ``logits`` against its diagonal entry."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -np.mean(np.diag(log_probs))
'''
NCE_DRIVER = '''"""Train-step losses of a toy dense retriever on paraphrase pairs: python train.py"""

import numpy as np

from retriever.objective import ContrastiveHead

CONFIG = {"model": {"dim": 8}, "loss": {"temperature": 0.05}}


def main():
    rng = np.random.default_rng(0)
    head = ContrastiveHead(CONFIG)
    for step in range(3):
        queries = rng.normal(size=(6, CONFIG["model"]["dim"]))
        keys = queries + 0.8 * rng.normal(size=queries.shape)
        print(f"step {step}: loss {head.info_nce(queries, keys):.4f}")


if __name__ == "__main__":
    main()
'''
N_HEAD = '''class ContrastiveHead:
    def __init__(self, config):
        self.config = config

    def info_nce(self, queries, keys):
'''
N_BODY = '''        loss_cfg = self.config["loss"]
        temperature = loss_cfg["temperature"]
        q = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        k = keys / np.maximum(np.linalg.norm(keys, axis=1, keepdims=True), 1e-12)
        logits = q @ k.T / temperature
        loss = _diagonal_xent(logits)
        if loss_cfg.get("symmetric", False):
            loss = 0.5 * (loss + _diagonal_xent(logits.T))
        return loss
'''
N_TAIL = '''

def _diagonal_xent(logits):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -np.mean(np.diag(log_probs))
'''


def _nce(old: str, new: str, tail: str = N_TAIL) -> str:
    assert old in N_BODY, old
    return N_HEAD + N_BODY.replace(old, new) + tail


NCE_WRONG = {
    "pins temperature": _nce('temperature = loss_cfg["temperature"]', "temperature = 0.05"),
    "temperature from the top level": _nce('temperature = loss_cfg["temperature"]',
                                           'temperature = self.config.get("temperature", 0.07)'),
    "symmetric ignored": _nce("        if loss_cfg.get(\"symmetric\", False):\n"
                              "            loss = 0.5 * (loss + _diagonal_xent(logits.T))\n", ""),
    "always symmetric": _nce('        if loss_cfg.get("symmetric", False):\n            loss = 0.5',
                             "        loss = 0.5"),
    "symmetric by default": _nce('loss_cfg.get("symmetric", False)', 'loss_cfg.get("symmetric", True)'),
    "not normalised": _nce("q = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)",
                           "q = queries").replace(
        "k = keys / np.maximum(np.linalg.norm(keys, axis=1, keepdims=True), 1e-12)", "k = keys"),
    "norm guard dropped": _nce("np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)",
                               "np.linalg.norm(queries, axis=1, keepdims=True)").replace(
        "np.maximum(np.linalg.norm(keys, axis=1, keepdims=True), 1e-12)",
        "np.linalg.norm(keys, axis=1, keepdims=True)"),
    "temperature multiplies": _nce("q @ k.T / temperature", "q @ k.T * temperature"),
    "summed over rows": _nce("loss = _diagonal_xent(logits)", "loss = _diagonal_xent(logits)",
                             N_TAIL.replace("-np.mean(np.diag(log_probs))", "-np.sum(np.diag(log_probs))")),
    "softmax over the batch axis": _nce("loss = _diagonal_xent(logits)\n", "loss = _diagonal_xent(logits.T)\n"),
    "keys normalised only": _nce("q = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)",
                                 "q = queries"),
    "symmetric terms summed": _nce("loss = 0.5 * (loss + _diagonal_xent(logits.T))",
                                   "loss = loss + _diagonal_xent(logits.T)"),
}
NCE_RIGHT = {
    "row by row": N_HEAD + '''        t = float(self.config["loss"]["temperature"])
        q = _unit(queries)
        k = _unit(keys)
        sims = q @ k.T / t
        forward = -np.mean([row[i] - np.logaddexp.reduce(row) for i, row in enumerate(sims)])
        if not self.config["loss"].get("symmetric"):
            return forward
        backward = -np.mean([col[i] - np.logaddexp.reduce(col) for i, col in enumerate(sims.T)])
        return (forward + backward) / 2


def _unit(x):
    return x / np.clip(np.sqrt((x * x).sum(-1, keepdims=True)), 1e-12, None)
''',
    "einsum and log-softmax": N_HEAD + '''        settings = self.config.get("loss", {})
        q = queries / np.maximum(np.linalg.norm(queries, axis=-1)[:, None], 1e-12)
        k = keys / np.maximum(np.linalg.norm(keys, axis=-1)[:, None], 1e-12)
        logits = np.einsum("id,jd->ij", q, k) / settings["temperature"]
        idx = np.arange(len(logits))
        lq = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
        loss = -lq[idx, idx].mean()
        if settings.get("symmetric") is True or settings.get("symmetric", False):
            lk = logits - np.logaddexp.reduce(logits, axis=0, keepdims=True)
            loss = (loss - lk[idx, idx].mean()) / 2
        return float(loss)
''',
    "own cross-entropy": N_HEAD + N_BODY.replace("_diagonal_xent", "_xent") + '''

def _xent(logits):
    n = logits.shape[0]
    lse = np.log(np.sum(np.exp(logits - logits.max(1, keepdims=True)), axis=1)) + logits.max(1)
    return float(np.sum(lse - logits[np.arange(n), np.arange(n)]) / n)
''',
}
NCE_GAPS = {
    "pins temperature": ["temperature"], "temperature from the top level": ["temperature"],
    "symmetric ignored": ["symmetric"], "always symmetric": ["symmetric"], "symmetric by default": ["symmetric"],
    "not normalised": ["np.linalg.norm"], "norm guard dropped": ["1e-12"], "temperature multiplies": ["/ temperature"],
    "summed over rows": ["_diagonal_xent(logits)"], "softmax over the batch axis": ["_diagonal_xent(logits)"],
    "keys normalised only": ["np.linalg.norm(queries"], "symmetric terms summed": ["0.5 * (loss"],
}


def nce_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``info_nce`` on general inputs: several temperatures, symmetric on, off and absent, unnormalised
    rows, a zero row."""
    rng = np.random.default_rng(46)
    calls = []
    for loss_cfg, zero in (({"temperature": 0.05}, False), ({"temperature": 0.3, "symmetric": True}, False),
                           ({"temperature": 0.1, "symmetric": False}, False), ({"temperature": 0.2}, True)):
        q = rng.normal(scale=3.0, size=(5, 4))
        k = q + rng.normal(size=q.shape)
        if zero:
            q[2] = 0.0
        head = ns["ContrastiveHead"]({"model": {"dim": 4}, "loss": loss_cfg})
        calls.append(lambda h=head, a=q, b=k: h.info_nce(a.copy(), b.copy()))
    return calls


LS_GOLDEN = '''

class CausalLMTrainer:
    """Fine-tunes a causal language model; ``args`` holds the training arguments (see args.py)."""

    def __init__(self, args, ignore_index=-100):
        self.args = args
        self.ignore_index = ignore_index

    def _smoothed_token_losses(self, log_probs, labels):
        """Per-token label-smoothed NLL, ``(1 - eps) * nll + eps * mean over the vocabulary of -log_probs`` with
        eps = ``args.label_smoothing``, and 0 where ``labels`` is ``ignore_index``; also the mask of counted
        tokens."""
        eps = self.args.label_smoothing
        counted = labels != self.ignore_index
        picked = np.take_along_axis(log_probs, np.where(counted, labels, 0)[..., None], axis=-1)[..., 0]
        losses = (1.0 - eps) * -picked + eps * -log_probs.mean(axis=-1)
        return np.where(counted, losses, 0.0), counted

    def compute_loss(self, logits, labels):
        """The next-token loss of a batch: ``logits`` (batch, seq, vocab) at position t predict ``labels``
        (batch, seq) at t + 1; the label-smoothed token losses of ``_smoothed_token_losses`` averaged over the
        counted tokens (0 when none is counted)."""
        logits = logits[:, :-1]
        targets = labels[:, 1:]
        shifted = logits - logits.max(axis=-1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
        losses, counted = self._smoothed_token_losses(log_probs, targets)
        return losses.sum() / max(int(counted.sum()), 1)
'''
LS_ARGS = '''"""Training arguments."""

from dataclasses import dataclass


@dataclass
class TrainingArgs:
    learning_rate: float = 5e-5
    label_smoothing: float = 0.1
    batch_size: int = 4
'''
LS_DRIVER = '''"""Evaluate the loss of a random causal LM on padded prompt-response batches: python finetune.py"""

import numpy as np

from lm.args import TrainingArgs
from lm.trainer import CausalLMTrainer


def main():
    rng = np.random.default_rng(0)
    args = TrainingArgs()
    trainer = CausalLMTrainer(args)
    for step in range(3):
        labels = rng.integers(0, 13, size=(args.batch_size, 9))
        labels[:, :3] = -100  # the prompt is not trained on
        labels[step, 7:] = -100  # a shorter response, padded
        logits = rng.normal(size=(args.batch_size, 9, 13))
        print(f"step {step}: loss {trainer.compute_loss(logits, labels):.4f}")


if __name__ == "__main__":
    main()
'''
L_HEAD = '''class CausalLMTrainer:
    def __init__(self, args, ignore_index=-100):
        self.args = args
        self.ignore_index = ignore_index

    def _smoothed_token_losses(self, log_probs, labels):
        eps = self.args.label_smoothing
        counted = labels != self.ignore_index
        picked = np.take_along_axis(log_probs, np.where(counted, labels, 0)[..., None], axis=-1)[..., 0]
        losses = (1.0 - eps) * -picked + eps * -log_probs.mean(axis=-1)
        return np.where(counted, losses, 0.0), counted

    def compute_loss(self, logits, labels):
'''
L_BODY = '''        logits = logits[:, :-1]
        targets = labels[:, 1:]
        shifted = logits - logits.max(axis=-1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
        losses, counted = self._smoothed_token_losses(log_probs, targets)
        return losses.sum() / max(int(counted.sum()), 1)
'''


_ls = editor(L_HEAD, L_BODY)


_OWN_NLL = '''        keep = targets != self.ignore_index
        nll = -np.take_along_axis(log_probs, np.where(keep, targets, 0)[..., None], axis=-1)[..., 0]
'''
LS_WRONG = {
    "no shift": _ls("        logits = logits[:, :-1]\n        targets = labels[:, 1:]\n", "        targets = labels\n"),
    "shifted the wrong way": _ls("logits = logits[:, :-1]\n        targets = labels[:, 1:]",
                                 "logits = logits[:, 1:]\n        targets = labels[:, :-1]"),
    "targets rolled": _ls("        logits = logits[:, :-1]\n        targets = labels[:, 1:]\n",
                          "        targets = np.roll(labels, -1, axis=1)\n"),
    "smoothing skipped": _ls("        losses, counted = self._smoothed_token_losses(log_probs, targets)\n",
                             _OWN_NLL + "        losses, counted = np.where(keep, nll, 0.0), keep\n"),
    "smoothing pinned": _ls("        losses, counted = self._smoothed_token_losses(log_probs, targets)\n",
                            _OWN_NLL + "        losses = np.where(keep, 0.9 * nll - 0.1 * log_probs.mean(-1), 0.0)\n"
                            "        counted = keep\n"),
    "count guard dropped": _ls("max(int(counted.sum()), 1)", "counted.sum()"),
    "mean over every token": _ls("max(int(counted.sum()), 1)", "counted.size"),
    "counts labels >= 0": _ls("max(int(counted.sum()), 1)", "max(int((targets >= 0).sum()), 1)"),
    "mean of sequence means": _ls("return losses.sum() / max(int(counted.sum()), 1)",
                                  "return np.mean(losses.sum(1) / np.maximum(counted.sum(1), 1))"),
    "summed": _ls("return losses.sum() / max(int(counted.sum()), 1)", "return losses.sum()"),
    "log-softmax over positions": _ls("shifted = logits - logits.max(axis=-1, keepdims=True)\n"
                                      "        log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, "
                                      "keepdims=True))",
                                      "shifted = logits - logits.max(axis=1, keepdims=True)\n"
                                      "        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, "
                                      "keepdims=True))"),
    "mask taken before the shift": _ls("losses, counted = self._smoothed_token_losses(log_probs, targets)",
                                       "losses, counted = self._smoothed_token_losses(log_probs, targets)\n"
                                       "        counted = (labels != self.ignore_index)[:, :-1]"),
}
LS_RIGHT = {
    "own loss from the arguments": L_HEAD + '''        eps = float(self.args.label_smoothing)
        lp = logits[:, :-1] - np.logaddexp.reduce(logits[:, :-1], axis=-1, keepdims=True)
        y = labels[:, 1:]
        ok = y != self.ignore_index
        if not ok.any():
            return 0.0
        rows = lp[ok]
        picked = rows[np.arange(len(rows)), y[ok]]
        return float(np.mean((1 - eps) * -picked - eps * rows.mean(-1)))
''',
    "loop over sequences": L_HEAD + '''        total, count = 0.0, 0
        for seq_logits, seq_labels in zip(logits, labels):
            lp = seq_logits - np.log(np.exp(seq_logits - seq_logits.max(-1, keepdims=True)).sum(-1, keepdims=True))
            lp = lp - seq_logits.max(-1, keepdims=True)
            per, kept = self._smoothed_token_losses(lp[:-1][None], seq_labels[1:][None])
            total += per.sum()
            count += int(kept.sum())
        return total / count if count else 0.0
''',
    "one-hot targets": L_HEAD + '''        lp = logits[:, :-1]
        lp = lp - np.logaddexp.reduce(lp, axis=2)[..., None]
        y = labels[:, 1:]
        eps, vocab = self.args.label_smoothing, lp.shape[-1]
        mask = (y != self.ignore_index)
        dist = np.full(lp.shape, eps / vocab)
        np.put_along_axis(dist, np.where(mask, y, 0)[..., None], 1 - eps + eps / vocab, axis=2)
        per = -(dist * lp).sum(-1) * mask
        return per.sum() / max(mask.sum(), 1)
''',
}
LS_GAPS = {
    "no shift": ["logits[:, :-1]"], "shifted the wrong way": ["logits[:, :-1]"], "targets rolled": ["labels[:, 1:]"],
    "smoothing skipped": ["label_smoothing"], "smoothing pinned": ["label_smoothing"],
    "count guard dropped": ["max(int(counted.sum()), 1)"], "mean over every token": ["max(int(counted.sum()), 1)"],
    "counts labels >= 0": ["ignore_index"], "mean of sequence means": ["losses.sum()"], "summed": ["max(int("],
    "log-softmax over positions": ["axis=-1"], "mask taken before the shift": ["labels[:, 1:]"],
}


def ls_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``compute_loss`` on general inputs: several smoothing factors, ignore indices (0 and -1 too),
    ignored tokens anywhere, a batch with every label ignored."""
    rng = np.random.default_rng(46)
    calls = []
    for eps, ignore, rate in ((0.1, -100, 0.3), (0.0, -100, 0.2), (0.25, 0, 0.3), (0.4, -1, 0.5), (0.1, -100, 1.0)):
        labels = rng.integers(1, 7, size=(3, 6))
        labels[rng.random(labels.shape) < rate] = ignore
        logits = rng.normal(size=(3, 6, 7))
        trainer = ns["CausalLMTrainer"](SimpleNamespace(label_smoothing=eps), ignore_index=ignore)
        calls.append(lambda t=trainer, a=logits, b=labels: t.compute_loss(a.copy(), b.copy()))
    return calls


SK_GOLDEN = '''

def sinkhorn(scores, epsilon=0.05, n_iters=3):
    """Equal-partition soft assignments of SwAV (Caron et al. 2020) by Sinkhorn-Knopp. ``scores`` (batch,
    prototypes) are similarities. Q = exp(scores / epsilon), transposed to (prototypes, batch) and scaled to sum
    1 (computed from scores minus their maximum, which changes nothing but overflow); then ``n_iters`` rounds of:
    each prototype's row scaled to sum 1/prototypes, then each sample's column to sum 1/batch. Returns Q times
    batch, transposed back: (batch, prototypes), each sample's assignment summing to 1."""
    q = np.exp((scores - scores.max()) / epsilon).T
    q = q / q.sum()
    prototypes, batch = q.shape
    for _ in range(n_iters):
        q = q / q.sum(axis=1, keepdims=True) / prototypes
        q = q / q.sum(axis=0, keepdims=True) / batch
    return (q * batch).T
'''
SK_DRIVER = '''"""Swapped-prediction targets for a batch of toy image features: python swav.py"""

import numpy as np

from swav.assign import sinkhorn


def main():
    rng = np.random.default_rng(0)
    prototypes = rng.normal(size=(5, 16))
    prototypes /= np.linalg.norm(prototypes, axis=1, keepdims=True)
    for step in range(3):
        feats = rng.normal(size=(12, 16))
        feats /= np.linalg.norm(feats, axis=1, keepdims=True)
        codes = sinkhorn(feats @ prototypes.T)
        print(f"step {step}: prototype usage {codes.sum(axis=0).round(2).tolist()}")


if __name__ == "__main__":
    main()
'''
K_SIG = "def sinkhorn(scores, epsilon=0.05, n_iters=3):\n"
K_BODY = '''    q = np.exp((scores - scores.max()) / epsilon).T
    q = q / q.sum()
    prototypes, batch = q.shape
    for _ in range(n_iters):
        q = q / q.sum(axis=1, keepdims=True) / prototypes
        q = q / q.sum(axis=0, keepdims=True) / batch
    return (q * batch).T
'''


_sk = editor(K_SIG, K_BODY)


SK_WRONG = {
    "pins epsilon": K_SIG + "    epsilon = 0.05\n" + K_BODY,
    "pins n_iters": _sk("range(n_iters)", "range(3)"),
    "one round fewer": _sk("range(n_iters)", "range(n_iters - 1)"),
    "one round more": _sk("range(n_iters)", "range(n_iters + 1)"),
    "columns first": _sk('''        q = q / q.sum(axis=1, keepdims=True) / prototypes
        q = q / q.sum(axis=0, keepdims=True) / batch
''', '''        q = q / q.sum(axis=0, keepdims=True) / batch
        q = q / q.sum(axis=1, keepdims=True) / prototypes
'''),
    "times epsilon": _sk("/ epsilon", "* epsilon"),
    "not scaled by the batch": _sk("return (q * batch).T", "return q.T"),
    "scaled by the prototypes": _sk("return (q * batch).T", "return (q * prototypes).T"),
    "left transposed": _sk("return (q * batch).T", "return q * batch"),
    "overflow guard dropped": _sk("np.exp((scores - scores.max()) / epsilon)", "np.exp(scores / epsilon)"),
    "softmax per sample": K_SIG + '''    e = np.exp((scores - scores.max(axis=1, keepdims=True)) / epsilon)
    return e / e.sum(axis=1, keepdims=True)
''',
    "rows to sum 1 at the end": _sk("return (q * batch).T", "return (q / q.sum(axis=1, keepdims=True)).T"),
}
SK_RIGHT = {
    "log domain": K_SIG + '''    log_q = (scores / epsilon).T
    log_q = log_q - np.logaddexp.reduce(log_q, axis=None)
    k, b = log_q.shape
    for _ in range(n_iters):
        log_q = log_q - np.logaddexp.reduce(log_q, axis=1, keepdims=True) - np.log(k)
        log_q = log_q - np.logaddexp.reduce(log_q, axis=0, keepdims=True) - np.log(b)
    return np.exp(log_q + np.log(b)).T
''',
    "scaling vectors": K_SIG + '''    kernel = np.exp((scores - np.max(scores)) / epsilon)
    n, k = kernel.shape
    r = np.ones(k)
    c = np.ones(n)
    for _ in range(int(n_iters)):
        r = 1.0 / (k * (kernel * c[:, None]).sum(axis=0))
        c = 1.0 / (n * (kernel * r[None, :]).sum(axis=1))
    if n_iters == 0:
        return kernel / kernel.sum() * n
    return n * kernel * r[None, :] * c[:, None]
''',
    "in place on samples by prototypes": K_SIG + '''    q = np.exp((scores - scores.max()) / epsilon)
    q /= q.sum()
    b, k = q.shape
    for _ in range(n_iters):
        q /= k * q.sum(axis=0, keepdims=True)
        q /= b * q.sum(axis=1, keepdims=True)
    q *= b
    return q
''',
}
SK_GAPS = {
    "pins epsilon": ["epsilon"], "pins n_iters": ["n_iters"], "one round fewer": ["range(n_iters)"],
    "one round more": ["range(n_iters)"], "columns first": ["axis=1", "axis=0"], "times epsilon": ["/ epsilon"],
    "not scaled by the batch": ["q * batch"], "scaled by the prototypes": ["q * batch"],
    "left transposed": ["(q * batch).T"], "overflow guard dropped": ["scores.max()"],
    "softmax per sample": ["range(n_iters)"], "rows to sum 1 at the end": ["q * batch"],
}


def sk_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``sinkhorn`` on general inputs: several epsilons and round counts (0 too), unequal shapes, large
    scores."""
    rng = np.random.default_rng(46)
    f = ns["sinkhorn"]
    s1, s2 = rng.uniform(-1, 1, size=(7, 4)), rng.uniform(-1, 1, size=(5, 5))
    big = 37.0 + rng.uniform(-0.5, 0.5, size=(6, 3))  # exp(scores / epsilon) overflows unless shifted
    return [lambda: f(s1.copy()), lambda: f(s1.copy(), epsilon=0.3, n_iters=1), lambda: f(s2.copy(), n_iters=5),
            lambda: f(s1.copy(), epsilon=0.5, n_iters=0), lambda: f(big.copy(), epsilon=0.05)]


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "10-GRPOAdvantages", "files": {"grpo/__init__.py": "", "grpo/advantages.py":
     '"""Policy-gradient advantages."""\n\nimport numpy as np\n' + GRPO_GOLDEN, "train.py": GRPO_DRIVER},
     "function": "grpo/advantages.py::grpo_advantages", "command": "python train.py",
     "head": "import statistics\n\nimport numpy as np\n\n\n", "wrong": GRPO_WRONG, "right": GRPO_RIGHT,
     "check": grpo_check, "gaps": GRPO_GAPS},
    {"name": "11-MomentumTeacher", "files": {"distill/__init__.py": "", "distill/teacher.py":
     '"""Momentum teachers."""\n\nimport math\n\nimport numpy as np\n' + EMA_GOLDEN, "pretrain.py": EMA_DRIVER},
     "function": "distill/teacher.py::MomentumTeacher.update", "command": "python pretrain.py",
     "head": "import math\n\nimport numpy as np\n\n\n", "wrong": EMA_WRONG, "right": EMA_RIGHT,
     "check": ema_check, "gaps": EMA_GAPS},
    {"name": "12-InfoNCE", "files": {"retriever/__init__.py": "", "retriever/objective.py":
     '"""Retrieval objectives."""\n\nimport numpy as np\n' + NCE_GOLDEN, "train.py": NCE_DRIVER},
     "function": "retriever/objective.py::ContrastiveHead.info_nce", "command": "python train.py", "head": _NP,
     "wrong": NCE_WRONG, "right": NCE_RIGHT, "check": nce_check, "gaps": NCE_GAPS},
    {"name": "13-TrainerSmoothedLoss", "files": {"lm/__init__.py": "", "lm/args.py": LS_ARGS, "lm/trainer.py":
     '"""The fine-tuning trainer."""\n\nimport numpy as np\n' + LS_GOLDEN, "finetune.py": LS_DRIVER},
     "function": "lm/trainer.py::CausalLMTrainer.compute_loss", "command": "python finetune.py", "head": _NP,
     "wrong": LS_WRONG, "right": LS_RIGHT, "check": ls_check, "gaps": LS_GAPS},
    {"name": "14-Sinkhorn", "files": {"swav/__init__.py": "", "swav/assign.py":
     '"""Cluster assignments."""\n\nimport numpy as np\n' + SK_GOLDEN, "swav.py": SK_DRIVER},
     "function": "swav/assign.py::sinkhorn", "command": "python swav.py", "head": _NP, "wrong": SK_WRONG,
     "right": SK_RIGHT, "check": sk_check, "gaps": SK_GAPS},
]
"""The held-out tasks."""
