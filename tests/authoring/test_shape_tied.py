"""A parameter tied to an array's shape (``n_heads`` equal to a dimension of ``x`` in every call) is no gap that a
case varying it alone could always fill: tasks check (T312) and validate's notes leave it out, and still name the
others; the plans vary it alone only where the result keeps its shape."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from helpers.tasks import Impl, write_task
from lmrbench.authoring.check.taskdata import shape_tied, unvaried_findings
from lmrbench.authoring.task.mask import mask_source
from lmrbench.core.taskset import load_task
from lmrbench.runtime.lmrbench_values import Encoder, write_case
from lmrbench.schemas.recording import RecordingIndex
from lmrbench.schemas.task_info import CheckerSettings

GOLDEN = '''import numpy as np


def split_heads(x, n_heads, beta):
    """Split the last axis into heads, scaled by beta."""
    return beta * x.reshape(x.shape[0], n_heads, -1)
'''


def case(x: np.ndarray, n_heads: int, beta: float) -> bytes:
    enc = Encoder()
    arguments = [{"name": n, "kind": "positional_or_keyword", "value": enc.encode(v, n)}
                 for n, v in (("x", x), ("n_heads", n_heads), ("beta", beta))]
    doc = {"format": "lmrbench-case", "version": 1, "target": "heads.py::split_heads", "binding": "function",
           "arguments": arguments, "self": None, "expected": enc.encode(beta * x.reshape(x.shape[0], n_heads, -1),
                                                                          "result"),
           "changed": {}, "self_after": None, "random_state": None}
    return write_case(doc, enc.arrays)


def test_a_parameter_tied_to_a_shape_is_not_named_unvaried(tmp_path):
    index = RecordingIndex(implementation=1, command="python run.py", sandbox="local",
                           recorded_at=datetime(2026, 1, 1, tzinfo=UTC), max_calls=12, checker=CheckerSettings(),
                           cases=[], unvaried=["n_heads", "beta"])
    doc = index.model_dump(mode="json")
    doc["cases"] = [{"file": f"case_{k}.npz", "test": f"test_case_{k}", "target": "heads.py::split_heads",
                     "binding": "function", "bytes": 1, "digest": str(k), "arguments": {}, "returns": ""}
                    for k in (1, 2)]
    files = {"unit_test/unit_test_1.py": "def test_nothing():\n    pass\n",
             "unit_test/data/impl_1/index.json": RecordingIndex.model_validate(doc).model_dump_json()}
    path = write_task(tmp_path / "bench", "1-Heads", repo="repo", goal_file="heads.py",
                      goal=mask_source(GOLDEN, ["split_heads"], file="heads.py"), golden=GOLDEN,
                      impls=[Impl("split_heads", "unit_test/unit_test_1.py", "Split.")], files=files)
    data = path / "repo" / "unit_test" / "data" / "impl_1"
    (data / "case_1.npz").write_bytes(case(np.ones((2, 12)), 4, 3.0))
    (data / "case_2.npz").write_bytes(case(np.ones((3, 8)), 4, 3.0))
    task = load_task(path)
    impl = task.info.implementation(1)
    # 4 is no dimension of x (2, 12) nor (3, 8), only of the results (2, 4, 3), (3, 4, 2): no input's shape
    assert shape_tied(task, impl, ["n_heads", "beta"]) == set()
    (data / "case_1.npz").write_bytes(case(np.ones((2, 4, 3)), 4, 3.0))
    (data / "case_2.npz").write_bytes(case(np.ones((4, 8)), 4, 3.0))
    # x (2, 4, 3) and x (4, 8) hold 4 in both calls; beta 3.0 is a float, never a dimension
    assert shape_tied(task, impl, ["n_heads", "beta"]) == {"n_heads"}
    [t312] = [f.message for f in unvaried_findings(task, impl)]
    assert "no test varies beta of split_heads" in t312 and "n_heads" not in t312
    # the plans vary it alone only to values that cannot broadcast against the recorded arrays (never 1), marked
    # tied, so that a value whose golden result changes shape makes no case; the search is told which leaves
    from lmrbench.authoring.record.amplify_plans import probe_plans
    from lmrbench.authoring.record.body_reads import body_reads
    from lmrbench.authoring.record.search_plans import search_plan

    paths = [data / "case_1.npz", data / "case_2.npz"]
    reads = body_reads(GOLDEN, "split_heads", ["x", "n_heads", "beta"])
    plans = {p["param"]: p for p in probe_plans(paths, reads, ["x", "n_heads", "beta"])}
    assert plans["n_heads"].get("tied") and not plans["beta"].get("tied")
    assert plans["n_heads"]["variants"] and all(v["set"]["n_heads"] != 1 for v in plans["n_heads"]["variants"])
    plan = search_plan(paths, reads, GOLDEN, "split_heads", "heads.py")
    assert 1 not in plan["leaves"]["n_heads"] and plan["tied"] == ["n_heads"]
