"""A comparison's boundary moved (``>`` for ``>=``), which only an input where both sides are equal can tell: the
search makes such inputs from what the other side took (a threshold set to one of the scores) and calls the
mutant equivalent only when one met the boundary. Ints meet it exactly and make a case; floats meet it only at a
knife edge, which validate names; a boundary where both forms agree (``np.where(x > floor, x, floor)``) is shown
equivalent, and the task stays valid."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers.record_fixture import grade, make_task
from lmrbench.authoring.mutants.mutants import generate_mutants
from lmrbench.authoring.record.compare_taps import compare_taps
from lmrbench.authoring.record.record import record_tests
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.benchmark.validation.weakness import recorded_reasons
from lmrbench.core.taskset import Task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.runtime import lmrbench_leaves
from lmrbench.schemas.recording import MutantCatch, RecordingIndex
from lmrbench.schemas.testrun import TestStatus

sys.path.insert(0, str(Path(lmrbench_leaves.__file__).parent))  # the probe imports its siblings by shipped names
import lmrbench_edges as edges  # noqa: E402

KEEP = '''import numpy as np


def keep_boxes(scores, min_score=0.05):
    """Indices of the scores above min_score, highest first."""
    idx = np.flatnonzero(scores > min_score)
    return idx[np.argsort(-scores[idx], kind="stable")]
'''
KEEP_DRIVER = '''import numpy as np

from det.keep import keep_boxes

rng = np.random.default_rng(0)
for _ in range(3):
    print(keep_boxes(rng.random(8)))
'''
FLOOR = '''import numpy as np


def floor_at(x, floor=0.0):
    """x with the entries below floor raised to it."""
    return np.where(x > floor, x, floor)
'''
FLOOR_DRIVER = '''import numpy as np

from act.floor import floor_at

rng = np.random.default_rng(0)
for _ in range(3):
    print(floor_at(rng.normal(size=6)))
'''
VOCAB_HEAD = '''import numpy as np


def build_vocab(counts, min_count=5):
    """Ids of the words seen at least min_count times."""
'''
VOCAB = VOCAB_HEAD + '''    return np.flatnonzero(counts >= min_count)
'''
VOCAB_DRIVER = '''import numpy as np

from text.vocab import build_vocab

rng = np.random.default_rng(0)
for _ in range(3):
    print(build_vocab(13 * rng.integers(0, 6, size=12) + 7))
'''
VOCAB_STRICT = VOCAB_HEAD + '''    return np.flatnonzero(counts > min_count)
'''
VOCAB_LOOP = VOCAB_HEAD + '''    return np.array([i for i, c in enumerate(counts) if not c < min_count], dtype=np.int64)
'''


@pytest.fixture(scope="module")
def local() -> Sandbox:
    return Sandbox(LocalRunner())


def _record(tmp_path: Path, local, function: str, files: dict[str, str]) -> tuple[Task, RecordingIndex]:
    """The task masking ``function`` of a repository of ``files``, recorded from ``python run.py``; its index."""
    task = make_task(tmp_path, function, extra=files)
    result = record_tests(task, 1, "python run.py", sandbox=local)
    return task, RecordingIndex.model_validate_json((result.data_dir / "index.json").read_text())


def _compare(index: RecordingIndex, text: str) -> MutantCatch:
    [m] = [m for m in index.mutants if m.kind == "compare" and text in m.description]
    return m


def test_a_float_threshold_met_only_at_a_knife_edge_is_named_not_shown_equivalent(tmp_path, local):
    _, index = _record(tmp_path, local, "det/keep.py::keep_boxes", {"det/keep.py": KEEP, "run.py": KEEP_DRIVER})
    m = _compare(index, "'> min_score'")
    assert not m.killed and m.search is not None and m.search.outcome == "live" and m.search.knife, m
    [reason] = [r for r in recorded_reasons(index.mutants, index.unvaried, index.pins) if "'> min_score'" in r]
    assert "only knife-edge inputs separate it" in reason


def test_a_boundary_where_both_forms_agree_is_shown_equivalent(tmp_path, local):
    _, index = _record(tmp_path, local, "act/floor.py::floor_at", {"act/floor.py": FLOOR, "run.py": FLOOR_DRIVER})
    m = _compare(index, "'> floor'")
    assert m.search is not None and m.search.outcome == "equivalent", m
    assert not [r for r in recorded_reasons(index.mutants, index.unvaried, index.pins) if "'> floor'" in r]


@pytest.mark.parametrize(("what", "source", "status"), [
    ("the boundary moved: > for >=", VOCAB_STRICT, TestStatus.FAILED),
    ("a loop keeping what is not below", VOCAB_LOOP, TestStatus.PASSED),
], ids=["strict", "loop"])
def test_an_int_threshold_no_recorded_count_meets_gets_a_case_that_meets_it(tmp_path, local, what, source, status):
    task, index = _record(tmp_path, local, "text/vocab.py::build_vocab",
                          {"text/vocab.py": VOCAB, "run.py": VOCAB_DRIVER})
    m = _compare(index, "'>= min_count'")
    assert m.killed, m
    assert grade(local, task, tmp_path / "candidate", "text/vocab.py", source) is status, what


def test_the_tapped_source_compares_as_the_golden_code_and_names_each_side():
    golden = KEEP + '''

class Gate:
    def open(self, x):
        return (x <= self.cfg.limit) & (0 < x)
'''
    mutants = generate_mutants(golden, "keep_boxes", file="det/keep.py")
    tap, sites = compare_taps(golden, ["scores", "min_score"], mutants)
    assert tap is not None
    by_text = {s["text"]: s for s in tap["sites"]}
    assert by_text["> min_score"] == {"text": "> min_score", "leaf": "min_score", "side": "right"}
    assert by_text["<= self.cfg.limit"]["leaf"] == "self.cfg.limit"
    assert by_text["< x"]["leaf"] == ""  # x is no parameter of the goal function
    [k] = [k for m, k in zip(mutants, sites, strict=True) if m.kind == "compare" and "'> min_score'" in m.description]
    assert tap["sites"][k]["text"] == "> min_score"
    assert all(k is None for m, k in zip(mutants, sites, strict=True) if m.kind != "compare")
    met: list[int] = []
    namespace = {edges.TAP: lambda k, a, b, op: (met.append(k), edges.OPS[op](a, b))[1]}
    exec(compile(tap["source"], "det/keep.py", "exec"), namespace)  # noqa: S102 - this test's own source
    import numpy as np

    scores = np.array([0.5, 0.01, 0.9])
    assert namespace["keep_boxes"](scores).tolist() == [2, 0] and met


def test_edge_values_meet_the_other_side_keep_the_leaf_kind_and_sign():
    assert edges.edge_values([0.3, 0.9, 0.1], 0.05) == [0.3, 0.1, 0.9, 0.6, 1.4]
    assert edges.edge_values([6.0, 19.0, 32.0], 5) == [6, 32, 25, 48, 3]  # whole values only
    assert edges.edge_values([0.2, 0.4], 0.3)[-1] == 0.9  # a leaf recorded non-negative stays so
    assert edges.edge_values([-2.0, 1.0], -1.0)[-1] == -3.0  # one recorded negative may go below them all
    assert edges.edge_values([0.5], True) == []  # a flag is no threshold
