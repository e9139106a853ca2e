"""Text the driver always gives with single spaces, to a body that splits on runs of whitespace (``str.split()``):
the recorded tests also give it doubled spaces, so a tokeniser that splits on one space fails, and one that finds
runs of non-space characters passes."""

from __future__ import annotations

import pytest

from helpers.record_fixture import grade, recorder
from lmrbench.schemas.testrun import TestStatus

HEAD = '''from collections import Counter


def unigram_f1(hypothesis, references):
    """The best F1 of the hypothesis's tokens against any reference's (each text split on runs of whitespace);
    0.0 when either side has no token."""
'''
GOLDEN = HEAD + '''    hyp = Counter(hypothesis.split())
    best = 0.0
    for ref in references:
        gold = Counter(ref.split())
        common = sum((hyp & gold).values())
        if common:
            p, r = common / sum(hyp.values()), common / sum(gold.values())
            best = max(best, 2 * p * r / (p + r))
    return best
'''
DRIVER = '''from metrics.f1 import unigram_f1

pairs = [("the cat sat on the mat", ["a cat sat on a mat", "the cat is on the mat"]),
         ("hello world", ["hello there world"]), ("x y z", ["a b c"])]
for hyp, refs in pairs:
    print(round(unigram_f1(hyp, refs), 4))
'''
ONE_SPACE = GOLDEN.replace("hypothesis.split()", 'hypothesis.split(" ")').replace("ref.split()", 'ref.split(" ")')
REGEX = HEAD + '''    import re

    def tokens(text):
        return re.findall(r"\\S+", text)

    scores = []
    for ref in references:
        hyp, gold = Counter(tokens(hypothesis)), Counter(tokens(ref))
        common = sum(min(c, gold[t]) for t, c in hyp.items())
        scores.append(0.0 if common == 0 else 2 * common / (sum(hyp.values()) + sum(gold.values())))
    return max(scores, default=0.0)
'''
TASKS = {"f1": ("metrics/f1.py::unigram_f1", {"metrics/__init__.py": "", "metrics/f1.py": GOLDEN, "run.py": DRIVER},
                "metrics/f1.py")}
CANDIDATES = [
    ("split on one space", ONE_SPACE, TestStatus.FAILED),
    ("runs of non-space characters by a regular expression", REGEX, TestStatus.PASSED),
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return recorder(tmp_path_factory, TASKS)


@pytest.mark.parametrize(("what", "source", "status"), CANDIDATES, ids=[c[0] for c in CANDIDATES])
def test_text_given_other_spacing_tells_right_from_wrong(recorded, tmp_path, what, source, status):
    task, sandbox = recorded("f1")
    assert grade(sandbox, task, tmp_path / "candidate", TASKS["f1"][2], source) is status, what
