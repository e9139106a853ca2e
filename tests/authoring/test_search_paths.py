"""Paths a driver never takes, which the recorded tests reach on their own: a branch of a stateful method that
only a varied call takes (a rate cut after a plateau, reached by the patience of an added case), a guard that binds
only near another leaf's value in that call (a floor at ``min_lr`` near the rate), a state update of that branch
dropped, a flag tried on more than one call (a greedy mode whose mistake shows on sampled tokens only), a value
pinned where it is computed with but not where it is checked, a setting the driver leaves None, and a mode read
through two locals (``scaling = config.scaling or {}``, ``kind = scaling.get("kind", "plain")``). Each is tested
both ways: the plausible wrong answer it exposes fails, a correct answer in another style passes."""

from __future__ import annotations

import textwrap

from helpers.record_fixture import graded_both_ways
from lmrbench.schemas.testrun import TestStatus

PLATEAU_HEAD = '''import numpy as np


class Plateau:
    def __init__(self, lr=0.1, factor=0.5, patience=3, min_lr=0.001, threshold=1e-4):
        self.lr, self.factor, self.patience = lr, factor, patience
        self.min_lr, self.threshold = min_lr, threshold
        self.best = float("inf")
        self.bad = 0

    def step(self, metric):
'''
PLATEAU = PLATEAU_HEAD + '''        """Track ``metric`` (lower is better): below ``best - threshold`` it is the new best
        and resets the count of bad epochs, any other adds one; past ``patience`` bad epochs in a row the rate
        is cut by ``factor``, never below ``min_lr``, and the count starts again. Returns the rate."""
        if metric < self.best - self.threshold:
            self.best = metric
            self.bad = 0
        else:
            self.bad += 1
        if self.bad > self.patience:
            self.lr = max(self.lr * self.factor, self.min_lr)
            self.bad = 0
        return self.lr
'''
PLATEAU_DRIVER = '''
    from schedule.plateau import Plateau

    sched = Plateau()
    for metric in (1.0, 0.8, 0.7, 0.6, 0.5, 0.55, 0.56):
        print(sched.step(metric))
'''
PLATEAU_NO_FLOOR = PLATEAU.replace("max(self.lr * self.factor, self.min_lr)", "self.lr * self.factor")
PLATEAU_NO_RESTART = PLATEAU.replace('''            self.lr = max(self.lr * self.factor, self.min_lr)
            self.bad = 0
''', '''            self.lr = max(self.lr * self.factor, self.min_lr)
''')
PLATEAU_NO_RESET = PLATEAU.replace('''            self.best = metric
            self.bad = 0
''', '''            self.best = metric
''')
PLATEAU_AT_PATIENCE = PLATEAU.replace("self.bad > self.patience", "self.bad >= self.patience")
PLATEAU_EARLY_RETURNS = PLATEAU_HEAD + '''        if metric + self.threshold < self.best:
            self.best, self.bad = metric, 0
            return self.lr
        self.bad += 1
        if self.bad <= self.patience:
            return self.lr
        self.bad = 0
        cut = self.lr * self.factor
        self.lr = cut if cut > self.min_lr else self.min_lr
        return self.lr
'''

ACCEPT = '''
    import numpy as np


    def accept_prefix(tokens, draft_scores, target_scores, greedy=False):
        """How many leading ``tokens`` (k,) the target accepts: token t at position i is accepted when
        ``target_scores[i, t] >= draft_scores[i, t]``, or, with ``greedy``, when t is the argmax of
        ``target_scores[i]``; the first token not accepted ends the prefix."""
        n = 0
        for i, t in enumerate(tokens):
            if greedy:
                ok = int(t) == int(np.argmax(target_scores[i]))
            else:
                ok = target_scores[i, t] >= draft_scores[i, t]
            if not ok:
                break
            n += 1
        return n
'''
ACCEPT_DRIVER = '''
    import numpy as np

    from decode.accept import accept_prefix

    rng = np.random.default_rng(3)
    for step in range(4):
        target = rng.dirichlet(np.ones(6) * 0.3, size=5)
        draft = 0.4 * target + 0.6 * rng.dirichlet(np.ones(6), size=5)
        # the first round drafts greedily, the others sample
        tokens = draft.argmax(axis=1) if step == 0 else np.array([rng.choice(6, p=row) for row in draft])
        print(accept_prefix(tokens, draft, target))
'''
ACCEPT_SIG = '''import numpy as np


def accept_prefix(tokens, draft_scores, target_scores, greedy=False):
'''
ACCEPT_DRAFT_ARGMAX = textwrap.dedent(ACCEPT).replace("ok = int(t) == int(np.argmax(target_scores[i]))",
                                                      "ok = int(np.argmax(draft_scores[i])) == "
                                                      "int(np.argmax(target_scores[i]))")
ACCEPT_VECTORISED = ACCEPT_SIG + '''    tokens = np.asarray(tokens)
    rows = np.arange(len(tokens))
    if greedy:
        ok = tokens == np.argmax(target_scores[: len(tokens)], axis=1)
    else:
        ok = target_scores[rows, tokens] >= draft_scores[rows, tokens]
    return int(len(tokens) if ok.all() else np.argmin(ok))
'''

CAPPED_CONFIG = '''
    from dataclasses import dataclass


    @dataclass
    class Config:
        eps: float = 0.2
        low: float | None = None
        cap: float = 3.0
'''
CAPPED_HEAD = '''import numpy as np


class Capped:
    def __init__(self, config):
        self.config = config

    def loss(self, ratio, adv):
'''
CAPPED = CAPPED_HEAD + '''        """Mean of ``max(-adv * r, -adv * clip(r, 1 - low, 1 + eps))``, capped at
        ``-adv * cap`` where ``adv < 0``; ``low`` None takes ``eps``; ValueError unless ``cap`` is above 1."""
        cfg = self.config
        if cfg.cap <= 1.0:
            raise ValueError("cap must be above 1")
        low = cfg.low if cfg.low is not None else cfg.eps
        surrogate = np.maximum(-adv * ratio, -adv * np.clip(ratio, 1.0 - low, 1.0 + cfg.eps))
        return float(np.mean(np.where(adv < 0, np.minimum(surrogate, -adv * cfg.cap), surrogate)))
'''
CAPPED_DRIVER = '''
    import numpy as np

    from rl.capped import Capped
    from rl.config import Config

    rng = np.random.default_rng(5)
    objective = Capped(Config())
    for _ in range(3):
        print(objective.loss(np.exp(rng.normal(0.0, 0.03, size=16)), rng.normal(size=16)))
'''
CAPPED_PINNED = CAPPED.replace("np.minimum(surrogate, -adv * cfg.cap)", "np.minimum(surrogate, -adv * 3.0)")
CAPPED_NO_LOW = CAPPED.replace("low = cfg.low if cfg.low is not None else cfg.eps", "low = cfg.eps")
CAPPED_SPLIT = CAPPED_HEAD + '''        c = self.config
        if not c.cap > 1.0:
            raise ValueError("cap")
        lo = c.eps if c.low is None else c.low
        r = np.clip(ratio, 1.0 - lo, 1.0 + c.eps)
        out = np.where(-adv * ratio > -adv * r, -adv * ratio, -adv * r)
        neg = adv < 0
        out[neg] = np.minimum(out[neg], -adv[neg] * c.cap)
        return float(out.mean())
'''

FREQS = '''
    import numpy as np


    def freqs(config, dim):
        """Inverse frequencies of ``dim`` / 2 rotary pairs for ``config.theta``, scaled as ``config.scaling`` (None:
        ``{}``) says: its "kind" (default "plain") is "plain", or "linear" (divided by its "factor"), or "ntk" (the
        base times ``factor ** (dim / (dim - 2))``); its "floor" (default 0, a missing or None entry too) is the
        least frequency."""
        scaling = config.scaling or {}
        kind = scaling.get("kind", "plain")
        base = config.theta
        if kind == "ntk":
            base = base * scaling["factor"] ** (dim / (dim - 2))
        inv = 1.0 / base ** (np.arange(0, dim, 2) / dim)
        if kind == "linear":
            inv = inv / scaling["factor"]
        return np.maximum(inv, scaling.get("floor") or 0.0)
'''
FREQS_DRIVER = '''
    from types import SimpleNamespace

    from model.freqs import freqs

    for dim in (8, 16):
        print(freqs(SimpleNamespace(theta=10000.0, scaling={"kind": "ntk", "factor": 2.0}), dim))
'''
FREQS_SIG = '''import numpy as np


def freqs(config, dim):
'''
FREQS_NO_LINEAR = FREQS_SIG + '''    scaling = config.scaling or {}
    base = config.theta
    if scaling.get("kind", "plain") == "ntk":
        base = base * scaling["factor"] ** (dim / (dim - 2))
    return np.maximum(1.0 / base ** (np.arange(0, dim, 2) / dim), scaling.get("floor") or 0.0)
'''
FREQS_BRANCHES = FREQS_SIG + '''    import math

    s = dict(config.scaling or {})
    kind = s.get("kind", "plain")
    theta = config.theta * (s["factor"] ** (dim / (dim - 2)) if kind == "ntk" else 1.0)
    out = np.array([theta ** (-i / dim) for i in range(0, dim, 2)])
    if kind == "linear":
        out = out / s["factor"]
    floor = s.get("floor")
    return np.maximum(out, floor if floor else 0.0)
'''


TASKS = {
    "plateau": ("schedule/plateau.py::Plateau.step", {"schedule/plateau.py": PLATEAU, "run.py": PLATEAU_DRIVER},
                "schedule/plateau.py"),
    "accept": ("decode/accept.py::accept_prefix", {"decode/accept.py": ACCEPT, "run.py": ACCEPT_DRIVER},
               "decode/accept.py"),
    "capped": ("rl/capped.py::Capped.loss", {"rl/capped.py": CAPPED, "rl/config.py": CAPPED_CONFIG,
                                            "run.py": CAPPED_DRIVER}, "rl/capped.py"),
    "freqs": ("model/freqs.py::freqs", {"model/freqs.py": FREQS, "run.py": FREQS_DRIVER}, "model/freqs.py"),
}
CANDIDATES = [
    ("plateau", "no floor at min_lr", PLATEAU_NO_FLOOR, TestStatus.FAILED),
    ("plateau", "the count not restarted after a cut", PLATEAU_NO_RESTART, TestStatus.FAILED),
    ("plateau", "the count not reset by a new best", PLATEAU_NO_RESET, TestStatus.FAILED),
    ("plateau", "a cut at patience, not past it", PLATEAU_AT_PATIENCE, TestStatus.FAILED),
    ("plateau", "early returns and a conditional floor", PLATEAU_EARLY_RETURNS, TestStatus.PASSED),
    ("accept", "greedy compares the draft's argmax", ACCEPT_DRAFT_ARGMAX, TestStatus.FAILED),
    ("accept", "vectorised with argmin", ACCEPT_VECTORISED, TestStatus.PASSED),
    ("capped", "the cap pinned where it caps, not where it is checked", CAPPED_PINNED, TestStatus.FAILED),
    ("capped", "low ignored (left None by the driver)", CAPPED_NO_LOW, TestStatus.FAILED),
    ("capped", "a split with a boolean index", CAPPED_SPLIT, TestStatus.PASSED),
    ("freqs", "a mode read through two locals ignored", FREQS_NO_LINEAR, TestStatus.FAILED),
    ("freqs", "a loop and a copied dict", FREQS_BRANCHES, TestStatus.PASSED),
]

recorded, test_a_path_the_driver_never_takes_tells_right_from_wrong = graded_both_ways(TASKS, CANDIDATES)
