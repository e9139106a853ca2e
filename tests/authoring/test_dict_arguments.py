"""Dict arguments keyed by name, as optimisers and clippers take them (``params``, ``grads``): the driver passes
every key, never a gradient that is None or missing, and never fills ``exclude``. The search gives a dict argument
whose values the body reads with ``.get`` one value None and one key left out (a parameter with no gradient), and
an optional argument the driver leaves None the first key of each dict argument (a name to exclude). Each is
tested both ways: the wrong answer it exposes fails, correct answers in other styles pass."""

from __future__ import annotations

from helpers.record_fixture import graded_both_ways
from lmrbench.schemas.testrun import TestStatus

CLIP_HEAD = '''import numpy as np


def scale_grads(params, grads, factor=0.5, exclude=None):
    """Multiply in place, by ``factor``, the gradient of every parameter of ``params`` (a dict of arrays by name)
    whose gradient in ``grads`` is present and not None and whose name is not in ``exclude`` (None: no name).
    Returns how many gradients were scaled."""
'''
CLIP_GOLDEN = CLIP_HEAD + '''    skipped = set() if exclude is None else set(exclude)
    scaled = 0
    for name in params:
        g = grads.get(name)
        if g is None or name in skipped:
            continue
        g *= factor
        scaled += 1
    return scaled
'''
CLIP_DRIVER = '''import numpy as np

from optim.scaling import scale_grads

rng = np.random.default_rng(0)
params = {"w": rng.normal(size=(3, 2)), "b": np.zeros(2)}
for _ in range(3):
    grads = {name: rng.normal(size=p.shape) for name, p in params.items()}
    print(scale_grads(params, grads))
'''
CLIP_INDEXED = CLIP_HEAD + '''    skipped = set() if exclude is None else set(exclude)
    scaled = 0
    for name in params:
        g = grads[name]
        if g is None or name in skipped:
            continue
        g *= factor
        scaled += 1
    return scaled
'''
CLIP_NO_EXCLUDE = CLIP_HEAD + '''    scaled = 0
    for name in params:
        g = grads.get(name)
        if g is None:
            continue
        g *= factor
        scaled += 1
    return scaled
'''
CLIP_FILTERED = CLIP_HEAD + '''    left_out = exclude or ()
    names = [n for n in params if n in grads and grads[n] is not None and n not in left_out]
    for n in names:
        np.multiply(grads[n], factor, out=grads[n])
    return len(names)
'''
TASKS = {
    "clip": ("optim/scaling.py::scale_grads",
             {"optim/__init__.py": "", "optim/scaling.py": CLIP_GOLDEN, "run.py": CLIP_DRIVER}, "optim/scaling.py"),
}
CANDIDATES = [
    ("clip", "a missing gradient indexed (KeyError), not skipped", CLIP_INDEXED, TestStatus.FAILED),
    ("clip", "exclude ignored", CLIP_NO_EXCLUDE, TestStatus.FAILED),
    ("clip", "names filtered first, out= updates", CLIP_FILTERED, TestStatus.PASSED),
]

recorded, test_a_missing_key_and_an_excluded_name_tell_right_from_wrong = graded_both_ways(TASKS, CANDIDATES)
