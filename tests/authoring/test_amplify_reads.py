"""Cases added where real drivers leave gaps, read from what the golden body does: the modes a text attribute
is compared with, the attributes of ``self`` a method reads, masks over zero padding, pairs the body combines;
and a call whose branch hangs on exact float equality left out (local sandbox, one recording)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.record_fixture import make_task
from lmrbench.authoring.check.check import task_findings
from lmrbench.authoring.record.body_reads import body_reads
from lmrbench.authoring.record.bodycoverage import coverage_text
from lmrbench.authoring.record.record import record_tests
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.core.taskset import load_task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Candidate
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.recording import RecordingIndex
from lmrbench.schemas.testrun import TestStatus

POOLER = '''
    import numpy as np


    class Pooler:
        """Pools token features over the positions a mask keeps."""

        def __init__(self, mode="mean", scale=1.0):
            self.mode = mode
            self.scale = scale
            self.eps = 1e-12

        def pool(self, x, mask):
            """Pool x (batch, seq, dim) over the positions where mask (batch, seq) is 1: "mean", "max" or "sum"."""
            w = mask[..., None]
            if self.mode == "max":
                return np.where(w > 0, x, -np.inf).max(axis=1) * self.scale
            if self.mode == "sum":
                return (x * w).sum(axis=1) * self.scale
            return (x * w).sum(axis=1) / (np.maximum(w.sum(axis=1), 1) + self.eps) * self.scale
'''
DRIVER = '''
    import numpy as np

    from model.pooling import Pooler

    rng = np.random.default_rng(0)
    for pooler in (Pooler(), Pooler(mode="max")):
        for step in range(3):
            mask = np.ones((2, 5))
            mask[step % 2, 3:] = 0
            x = rng.normal(size=(2, 5, 3)) * mask[..., None]  # padding holds zeros
            print(pooler.pool(x, mask).round(3))
'''
HEAD = "import numpy as np\n\n\nclass Pooler:\n    def __init__(self, mode=\"mean\", scale=1.0):\n" \
       "        self.mode = mode\n        self.scale = scale\n\n    def pool(self, x, mask):\n"
WRONG = {
    "sum without the mask": '''        w = mask[..., None]
        if self.mode == "max":
            return np.where(w > 0, x, -np.inf).max(axis=1) * self.scale
        if self.mode == "sum":
            return x.sum(axis=1) * self.scale
        return (x * w).sum(axis=1) / np.maximum(w.sum(axis=1), 1) * self.scale
''',
    "ignores scale": '''        w = mask[..., None]
        if self.mode == "max":
            return np.where(w > 0, x, -np.inf).max(axis=1)
        if self.mode == "sum":
            return (x * w).sum(axis=1)
        return (x * w).sum(axis=1) / np.maximum(w.sum(axis=1), 1)
''',
    "sum is the mean": '''        w = mask[..., None]
        if self.mode == "max":
            return np.where(w > 0, x, -np.inf).max(axis=1) * self.scale
        return (x * w).sum(axis=1) / np.maximum(w.sum(axis=1), 1) * self.scale
''',
}
RIGHT = '''        keep = mask.astype(bool)
        out = []
        for row, k in zip(x, keep):
            kept = row[k]
            if self.mode == "max":
                out.append(kept.max(axis=0))
            elif self.mode == "sum":
                out.append(kept.sum(axis=0))
            else:
                out.append(kept.mean(axis=0) if len(kept) else np.zeros(row.shape[-1]))
        return np.array(out) * self.scale
'''


pytestmark = pytest.mark.xdist_group("amplify_reads")  # the module's recorded task, made once on one worker

@pytest.fixture(scope="module")
def local():
    return Sandbox(LocalRunner())


def test_a_size_recorded_at_least_one_is_not_tried_below_one_unless_the_body_compares_it_with_zero():
    from lmrbench.authoring.record.amplify_plans import in_domain

    source = '''
def histogram(x, n_bins=15, k=3, shift=2, top=4):
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    if top > 0:
        x = x[:top]
    return [np.zeros(k) for _ in range(top)], edges + shift
'''
    reads = body_reads(source, "histogram", ["x", "n_bins", "k", "shift", "top"])
    assert reads.sizes == ["n_bins", "k", "top"]
    assert body_reads("def f(x, m=None):\n    return x if m is None else x * m\n", "f", ["x", "m"]).nones == ["m"]
    assert in_domain("n_bins", [-15, 0, 16, 14, 1], [15], reads) == [16, 14, 1]  # a count of bins stays one
    # compared with zero: 0, its off switch, is tried, but never below it (a negative epoch count where the body
    # tests ``> 0`` failed a correct answer that divides by it)
    assert in_domain("top", [-4, 0, 5], [4], reads) == [0, 5]
    assert in_domain("shift", [-2, 0, 3], [2], reads) == [0, 3]  # no size: zero, not negative


@pytest.fixture(scope="module")
def pooler(tmp_path_factory, local):
    task = make_task(tmp_path_factory.mktemp("pool"), "model/pooling.py::Pooler.pool",
                     extra={"model/pooling.py": POOLER, "run.py": DRIVER})
    return task, record_tests(task, 1, "python run.py", sandbox=local, max_calls=2)


def grade(local, task, folder: Path, body: str) -> TestStatus:
    (folder / "model").mkdir(parents=True)
    (folder / "model" / "pooling.py").write_text(HEAD + body)
    return evaluate_variant(local, task, task.info.implementation(1), Candidate(folder=folder), timeout=300).status


def test_what_a_body_reads_of_its_parameters():
    source = '''
class Filter:
    def apply(self, x, top_k=5, keep=1, reduction="mean"):
        """Reduce by "mean", "sum" or "none"."""
        k = max(top_k, keep)
        if top_k > 0:
            x = x * self.scale
        if reduction == "sum":
            return x.sum() * k
        return x[x > self.floor].mean()
'''
    reads = body_reads(source, "Filter.apply", ["x", "top_k", "keep", "reduction"])
    assert reads.literals == {"reduction": ["sum", "mean", "none"]}  # compared, then documented
    assert reads.self_reads == ["self.scale", "self.floor"]
    assert ("keep", "top_k") in reads.pairs and ("self.scale", "top_k") in reads.pairs
    assert reads.signed == ["top_k"] and "self.scale" in reads.masks


def test_a_method_gets_cases_for_the_modes_and_attributes_it_reads(pooler):
    task, result = pooler
    summary = "\n".join(result.summary)
    # the driver used two modes; the third one the body compares with gets a case, on two calls
    assert "self.mode took 'mean', 'max' in the recording; added 2 case(s) with self.mode 'sum'" in summary
    assert "self.scale was always 1.0 in the recording; added 4 case(s) with self.scale 0.5-5.0" in summary
    assert "added a case with noise where mask leaves entries out" in summary
    index = RecordingIndex.model_validate_json((result.data_dir / "index.json").read_text())
    # eps cannot change a result beyond the tolerance: named, with what was tried, by record and tasks check
    assert index.unvaried == ["self.eps"]
    assert "no test varies self.eps: no case could be made (it changes no result of the recorded calls; tried " \
           "5e-13, 2e-12, 3e-12, 5e-12)" in summary
    [t312] = [f.message for f in task_findings(task) if f.code == "T312"]
    assert t312.startswith("implementation 1: no test varies self.eps of Pooler.pool: self.eps (no case could be "
                           "made (it changes no result")
    # two kept calls of each mode the driver used, though --max-calls is 2
    assert len([c for c in index.cases if not c.amplified]) == 4
    assert sum("a second call with self.mode=" in ln for ln in result.summary) == 0  # reasons are not printed


@pytest.mark.parametrize("wrong", sorted(WRONG))
def test_wrong_pooling_fails(pooler, local, tmp_path, wrong):
    task, _ = pooler
    assert grade(local, task, tmp_path, WRONG[wrong]) is TestStatus.FAILED


def test_pooling_in_another_style_passes(pooler, local, tmp_path):
    task, _ = pooler
    assert grade(local, task, tmp_path, RIGHT) is TestStatus.PASSED


def test_a_case_that_hangs_on_exact_float_equality_is_left_out(tmp_path, local):
    examples = Path(__file__).resolve().parents[2] / "examples"
    shutil.copytree(examples / "tasks" / "2-BERTScore", tmp_path / "2-BERTScore")
    task = load_task(tmp_path / "2-BERTScore")
    result = record_tests(task, 1, "python run_metric.py", sandbox=local, max_calls=7, force=True)
    [line] = [ln for ln in result.summary if "one-ulp" in ln]
    assert line.startswith("dropped the call (ref_embedding=float64[2, 2]; ref_idf=float64[2]; ")
    assert "a branch taken on exact float equality" in line
    # precision 0.6 and recall -0.6 cancel to exactly 0.0: that call is gone, the stable ones stay
    assert len([c for c in result.cases if not c.amplified]) == 6
    # the driver's orthogonal embeddings take the p + r == 0 branch for a stable reason
    assert [coverage_text(c) for c in result.coverage] == ["lines 13/13, branches 2/2"]


def test_a_tie_is_no_knife_edge(tmp_path, local):
    ranking = '''
        import numpy as np


        def best(scores):
            """Index of the highest score of each row (the first of equal ones)."""
            return np.argmax(scores, axis=-1)
    '''
    driver = '''
        import numpy as np

        from model.ranking import best

        print(best(np.array([[2.5, 2.5, 1.25], [0.5, 3.75, 3.75]])))
    '''
    task = make_task(tmp_path, "model/ranking.py::best", extra={"model/ranking.py": ranking, "run.py": driver})
    result = record_tests(task, 1, "python run.py", sandbox=local)
    assert not any("one-ulp" in line for line in result.summary) and len(result.cases) == 1
