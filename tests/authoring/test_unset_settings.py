"""Settings and inputs a driver never gives, which the recorded tests reach on their own: a model object of the
repository's own class passed as an argument (recorded as a record of its attributes), an argument left None that
falls back to the model's setting (``if max_length is None: max_length = model.config.n_positions``), a config
field left None that falls back to others (``head_dim or hidden // heads``), a key the recorded dict lacks, read
with no default and tested (``scaling.get("factor")``), done flags the body converts to numbers given as 0/1 ints,
an input on which the golden code overflows, where code in another style raises, never made a case, and a key read
with its legacy name as the default (``scaling.get("rope_type", scaling.get("type"))``), given under that name, and
a setting the driver always sets that a condition checks for None first (``start is not None and epoch >= start``),
left None. Each
is tested both ways: the plausible wrong answer it exposes fails, a correct answer in another style passes."""

from __future__ import annotations

from helpers.record_fixture import graded_both_ways
from lmrbench.schemas.testrun import TestStatus

NGRAM = '''"""A bigram language model."""

import numpy as np


class Config:
    def __init__(self, n_positions=16):
        self.n_positions = n_positions


class Bigram:
    def __init__(self, vocab, seed=0):
        rng = np.random.default_rng(seed)
        table = rng.random((vocab, vocab)) + 0.1
        self.logp = np.log(table / table.sum(axis=1, keepdims=True))
        self.config = Config()

    def log_probs(self, ids):
        """Log-probability of each token after the first given the one before it."""
        return self.logp[ids[:-1], ids[1:]]
'''
PPL_HEAD = '''import numpy as np


def window_nll(model, ids, max_length=None):
'''
PPL = PPL_HEAD + '''    """Mean negative log-likelihood of ``ids`` scored window by window: windows of
    ``max_length`` tokens (``model.config.n_positions`` when None) that do not overlap; a window scores its
    tokens after its first."""
    if max_length is None:
        max_length = model.config.n_positions
    total, count = 0.0, 0
    for start in range(0, len(ids), max_length):
        window = ids[start:start + max_length]
        if len(window) > 1:
            total -= float(model.log_probs(window).sum())
            count += len(window) - 1
    return total / count
'''
PPL_DRIVER = '''
import numpy as np

from lm.ngram import Bigram
from lm.ppl import window_nll

model = Bigram(12)
rng = np.random.default_rng(1)
for _ in range(3):
    print(window_nll(model, rng.integers(0, 12, size=40)))
'''
PPL_IGNORES_MAX_LENGTH = PPL.replace('''    if max_length is None:
        max_length = model.config.n_positions
''', '''    max_length = model.config.n_positions
''')
PPL_LIST = PPL_HEAD + '''    size = model.config.n_positions if max_length is None else max_length
    windows = [ids[i:i + size] for i in range(0, len(ids), size)]
    scores = [-model.log_probs(w) for w in windows if len(w) >= 2]
    return float(np.concatenate(scores).mean())
'''

HEADS_HEAD = '''import numpy as np
from dataclasses import dataclass


@dataclass
class Config:
    hidden_size: int = 64
    num_heads: int = 4
    head_dim: int | None = None
    base: float = 10000.0


def inv_freq(config):
'''
HEADS = HEADS_HEAD + '''    """Rotary inverse frequencies ``base ** (-i / d)`` for i = 0, 2, ..., d - 2, with d =
    ``config.head_dim`` or, when that is None, ``hidden_size // num_heads``."""
    d = getattr(config, "head_dim", None) or config.hidden_size // config.num_heads
    return 1.0 / config.base ** (np.arange(0, d, 2) / d)
'''
HEADS_DRIVER = '''
from model.rope import Config, inv_freq

print(inv_freq(Config()))
'''
HEADS_IGNORED = HEADS.replace('getattr(config, "head_dim", None) or config.hidden_size // config.num_heads',
                              "config.hidden_size // config.num_heads")
HEADS_BRANCH = HEADS_HEAD + '''    d = config.head_dim
    if not d:
        d = config.hidden_size // config.num_heads
    return np.power(float(config.base), -np.arange(0, d, 2) / float(d))
'''

SCALE_HEAD = '''import numpy as np


def attention_scale(scores, scaling):
'''
SCALE = SCALE_HEAD + '''    """``scores`` times the attention factor: ``scaling["attention_factor"]`` when given
    (and not None), else ``0.1 ln(scaling["factor"]) + 1``."""
    factor = scaling.get("attention_factor")
    if factor is None:
        factor = 0.1 * np.log(scaling["factor"]) + 1.0
    return scores * factor
'''
SCALE_DRIVER = '''
import numpy as np

from model.scale import attention_scale

print(attention_scale(np.arange(6.0).reshape(2, 3), {"factor": 4.0}))
'''
SCALE_IGNORED = SCALE.replace('''    factor = scaling.get("attention_factor")
    if factor is None:
        factor = 0.1 * np.log(scaling["factor"]) + 1.0
''', '''    factor = 0.1 * np.log(scaling["factor"]) + 1.0
''')
SCALE_GET = SCALE_HEAD + '''    import math

    given = scaling.get("attention_factor", None)
    return scores * (given if given is not None else 1.0 + 0.1 * math.log(scaling["factor"]))
'''

LEGACY_HEAD = '''import numpy as np


def scaled_positions(positions, scaling):
'''
LEGACY = LEGACY_HEAD + '''    """``positions`` over ``scaling["factor"]`` for the kind "linear":
    ``scaling["rope_type"]``, read under its legacy name ``scaling["type"]`` where absent
    ("default" when neither is given)."""
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    return positions / scaling["factor"] if kind == "linear" else positions
'''
LEGACY_DRIVER = '''
import numpy as np

from model.legacy import scaled_positions

print(scaled_positions(np.arange(6.0), {"rope_type": "linear", "factor": 4.0}))
'''
LEGACY_IGNORED = LEGACY.replace('scaling.get("rope_type", scaling.get("type", "default"))',
                                'scaling.get("rope_type", "default")')
LEGACY_CHAIN = LEGACY_HEAD + '''    has = "rope_type" in scaling
    kind = scaling["rope_type"] if has else scaling.get("type") or "default"
    if kind != "linear":
        return positions
    return positions * (1.0 / scaling["factor"])
'''

RETURNS_HEAD = '''import numpy as np


def discounted_returns(rewards, dones, gamma=0.9):
'''
RETURNS = RETURNS_HEAD + '''    """Discounted returns of ``rewards`` (T, B), cut where ``dones`` (True, or 1, where
    an episode ended with step t)."""
    keep = 1.0 - np.asarray(dones, dtype=np.float64)
    out = np.zeros_like(rewards, dtype=np.float64)
    running = np.zeros(rewards.shape[1])
    for t in reversed(range(rewards.shape[0])):
        running = rewards[t] + gamma * keep[t] * running
        out[t] = running
    return out
'''
RETURNS_DRIVER = '''
import numpy as np

from rl.returns import discounted_returns

rng = np.random.default_rng(0)
for _ in range(2):
    print(discounted_returns(rng.normal(size=(6, 3)), rng.random((6, 3)) < 0.3).sum())
'''
RETURNS_INVERTED = RETURNS.replace("keep = 1.0 - np.asarray(dones, dtype=np.float64)", "keep = ~np.asarray(dones)")
RETURNS_WHERE = RETURNS_HEAD + '''    ended = np.asarray(dones).astype(bool)
    out = np.empty(rewards.shape)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + np.where(ended[t], 0.0, gamma * running)
        out[t] = running
    return out
'''

RATIO_HEAD = '''import numpy as np


def clipped_weights(logp_new, logp_old, cap=2.0):
'''
RATIO = RATIO_HEAD + '''    """Importance weights ``exp(logp_new - logp_old)`` of log-probabilities of shape
    (n,), capped at ``cap``, normalised to sum to 1."""
    w = np.minimum(np.exp(logp_new - logp_old), cap)
    return w / w.sum()
'''
RATIO_DRIVER = '''
import numpy as np

from rl.weights import clipped_weights

rng = np.random.default_rng(0)
for _ in range(3):
    old = rng.normal(-3, 0.3, 8)
    print(clipped_weights(old + rng.uniform(1, 2, 8), old))  # every ratio past the cap
'''
RATIO_MATH = RATIO_HEAD + '''    import math

    w = [min(math.exp(a - b), cap) for a, b in zip(logp_new.tolist(), logp_old.tolist())]
    return np.array(w) / sum(w)
'''
RATIO_UNCAPPED = RATIO.replace("np.minimum(np.exp(logp_new - logp_old), cap)", "np.exp(logp_new - logp_old)")

DRW_HEAD = '''import numpy as np


def class_weights(counts, epoch, start=None, beta=0.99):
    """Per-class weights: from epoch ``start`` on (never, when ``start`` is None), the inverse effective number
    ``(1 - beta) / (1 - beta ** n)`` of each class, scaled to sum to the number of classes; else all ones."""
'''
DRW_GOLDEN = DRW_HEAD + '''    n = np.asarray(counts, dtype=np.float64)
    if start is not None and epoch >= start:
        w = (1.0 - beta) / (1.0 - np.power(beta, n))
        return w / w.sum() * n.size
    return np.ones(n.size)
'''
DRW_DRIVER = '''from losses.drw import class_weights

for epoch in range(4):
    print(class_weights([50, 10, 2], epoch, start=2))
'''
DRW_COMPARES_NONE = DRW_GOLDEN.replace("if start is not None and epoch >= start:", "if epoch >= start:")
DRW_DEFAULTED = DRW_HEAD + '''    n = np.asarray(counts, dtype=np.float64)
    if epoch < (float("inf") if start is None else start):
        return np.ones(n.size)
    w = (1.0 - beta) / -np.expm1(n * np.log(beta))
    return w * (n.size / w.sum())
'''
TASKS = {
    "drw": ("losses/drw.py::class_weights", {"losses/__init__.py": "", "losses/drw.py": DRW_GOLDEN,
                                             "run.py": DRW_DRIVER}, "losses/drw.py"),
    "ppl": ("lm/ppl.py::window_nll", {"lm/__init__.py": "", "lm/ngram.py": NGRAM, "lm/ppl.py": PPL,
                                      "run.py": PPL_DRIVER}, "lm/ppl.py"),
    "heads": ("model/rope.py::inv_freq", {"model/rope.py": HEADS, "run.py": HEADS_DRIVER}, "model/rope.py"),
    "scale": ("model/scale.py::attention_scale", {"model/scale.py": SCALE, "run.py": SCALE_DRIVER},
              "model/scale.py"),
    "returns": ("rl/returns.py::discounted_returns", {"rl/returns.py": RETURNS, "run.py": RETURNS_DRIVER},
                "rl/returns.py"),
    "ratio": ("rl/weights.py::clipped_weights", {"rl/weights.py": RATIO, "run.py": RATIO_DRIVER}, "rl/weights.py"),
    "legacy": ("model/legacy.py::scaled_positions", {"model/legacy.py": LEGACY, "run.py": LEGACY_DRIVER},
               "model/legacy.py"),
}
CANDIDATES = [
    ("drw", "start compared with the epoch when left None (the driver always sets it)", DRW_COMPARES_NONE,
     TestStatus.FAILED),
    ("drw", "None read as a start never reached, expm1", DRW_DEFAULTED, TestStatus.PASSED),
    ("ppl", "max_length ignored (left None by the driver)", PPL_IGNORES_MAX_LENGTH, TestStatus.FAILED),
    ("ppl", "windows listed first, one mean over their scores", PPL_LIST, TestStatus.PASSED),
    ("heads", "head_dim ignored (left None by the driver)", HEADS_IGNORED, TestStatus.FAILED),
    ("heads", "a branch on head_dim and np.power", HEADS_BRANCH, TestStatus.PASSED),
    ("scale", "a key the config lacks ignored", SCALE_IGNORED, TestStatus.FAILED),
    ("scale", "a conditional expression and math.log", SCALE_GET, TestStatus.PASSED),
    ("returns", "done flags negated with ~", RETURNS_INVERTED, TestStatus.FAILED),
    ("returns", "np.where on the flags as bools", RETURNS_WHERE, TestStatus.PASSED),
    ("ratio", "the cap dropped", RATIO_UNCAPPED, TestStatus.FAILED),
    ("ratio", "math.exp element by element", RATIO_MATH, TestStatus.PASSED),
    ("legacy", "the legacy key never read", LEGACY_IGNORED, TestStatus.FAILED),
    ("legacy", "a membership test, then the legacy key", LEGACY_CHAIN, TestStatus.PASSED),
]

recorded, test_a_setting_the_driver_never_gives_tells_right_from_wrong = graded_both_ways(TASKS, CANDIDATES)
