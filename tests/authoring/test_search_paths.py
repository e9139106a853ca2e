"""Paths a driver never takes, which the recorded tests reach on their own: a branch of a stateful method that
only a varied call takes (a rate cut after a plateau, reached by the patience of an added case), a guard that binds
only near another leaf's value in that call (a floor at ``min_lr`` near the rate), a state update of that branch
dropped, and a flag tried on more than one call (a greedy mode whose mistake shows on sampled tokens only). Each
is tested both ways: the plausible wrong answer it exposes fails, a correct answer in another style passes."""

from __future__ import annotations

import pytest

from helpers.record_fixture import grade, recorded_task
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
ACCEPT_DRAFT_ARGMAX = ACCEPT_SIG + '''    n = 0
    for i, t in enumerate(tokens):
        if greedy:
            ok = int(np.argmax(draft_scores[i])) == int(np.argmax(target_scores[i]))
        else:
            ok = target_scores[i, t] >= draft_scores[i, t]
        if not ok:
            break
        n += 1
    return n
'''
ACCEPT_VECTORISED = ACCEPT_SIG + '''    tokens = np.asarray(tokens)
    rows = np.arange(len(tokens))
    if greedy:
        ok = tokens == np.argmax(target_scores[: len(tokens)], axis=1)
    else:
        ok = target_scores[rows, tokens] >= draft_scores[rows, tokens]
    return int(len(tokens) if ok.all() else np.argmin(ok))
'''

TASKS = {
    "plateau": ("schedule/plateau.py::Plateau.step", {"schedule/plateau.py": PLATEAU, "run.py": PLATEAU_DRIVER},
                "schedule/plateau.py"),
    "accept": ("decode/accept.py::accept_prefix", {"decode/accept.py": ACCEPT, "run.py": ACCEPT_DRIVER},
               "decode/accept.py"),
}
CANDIDATES = [
    ("plateau", "no floor at min_lr", PLATEAU_NO_FLOOR, TestStatus.FAILED),
    ("plateau", "the count not restarted after a cut", PLATEAU_NO_RESTART, TestStatus.FAILED),
    ("plateau", "the count not reset by a new best", PLATEAU_NO_RESET, TestStatus.FAILED),
    ("plateau", "a cut at patience, not past it", PLATEAU_AT_PATIENCE, TestStatus.FAILED),
    ("plateau", "early returns and a conditional floor", PLATEAU_EARLY_RETURNS, TestStatus.PASSED),
    ("accept", "greedy compares the draft's argmax", ACCEPT_DRAFT_ARGMAX, TestStatus.FAILED),
    ("accept", "vectorised with argmin", ACCEPT_VECTORISED, TestStatus.PASSED),
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    made = {}

    def get(name: str):
        if name not in made:
            function, files, _ = TASKS[name]
            made[name] = recorded_task(tmp_path_factory.mktemp(name), function, files, "python run.py")
        return made[name]

    return get


@pytest.mark.parametrize(("task", "what", "source", "status"), CANDIDATES, ids=[c[1] for c in CANDIDATES])
def test_a_path_the_driver_never_takes_tells_right_from_wrong(recorded, tmp_path, task, what, source, status):
    made, sandbox = recorded(task)
    assert grade(sandbox, made, tmp_path / "candidate", TASKS[task][2], source) is status, what
