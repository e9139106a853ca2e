"""The splice grades what was submitted: whole-file answers that redefine the file's own helpers, rebind them,
shadow an imported one, fall back on an import or define the goal function twice, graded by real runs both
ways; and what the splice keeps, renames and drops, as candidate.json says it."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.tasks import Impl, write_task
from lmrbench.authoring.task.mask import mask_source
from lmrbench.benchmark.execution.sandboxes import get_sandbox
from lmrbench.benchmark.pipeline.agent import import_agent
from lmrbench.benchmark.pipeline.evaluate import evaluate
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.core.source.candidate_splice import splice_candidate
from lmrbench.core.taskset import load_taskset
from lmrbench.errors import LmrError

REPO, GOAL = "lse_repo", "toy/stats.py"

STATS_PY = '''"""Log-softmax of the toy paper."""

import math

from toy.utils import center


def _lse(xs):
    """The log of the sum of the exponentials, shifted by the maximum."""
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def log_softmax(xs):
    """log softmax of xs (Equation 2)."""
    lse = _lse(xs)
    return [x - lse for x in xs]


def spread(xs):
    """Not a goal function: its test sees the file's own helpers whatever a candidate does."""
    return _lse(center(xs))
'''

UTILS_PY = "def center(xs):\n    m = sum(xs) / len(xs)\n    return [x - m for x in xs]\n"

TEST_PY = '''import math

from toy.stats import log_softmax, spread


def test_log_softmax():
    xs = [1.0, 2.0, 3.0]
    ref = math.log(sum(math.exp(v) for v in xs))
    assert all(abs(a - (x - ref)) < 1e-9 for a, x in zip(log_softmax(xs), xs))


def test_log_softmax_is_stable():
    assert all(abs(a - math.log(0.5)) < 1e-9 for a in log_softmax([1000.0, 1000.0]))


def test_spread_keeps_the_pristine_helpers():
    assert abs(spread([1.0, 3.0]) - math.log(math.exp(-1) + math.exp(1))) < 1e-9
'''

MASKED = mask_source(STATS_PY, ["log_softmax"], file=GOAL)
PRISTINE_LSE = STATS_PY[STATS_PY.index("def _lse"):STATS_PY.index("def log_softmax")]
SHIFTED = "shift + math.log(sum(math.exp(x - shift) for x in xs))"
UNSTABLE = "math.log(sum(math.exp(x) for x in xs))"  # overflows at 1000: a plausible mistake


def _goal(body: str) -> str:
    return f'def log_softmax(xs):\n    """log softmax of xs (Equation 2)."""\n{body}\n'


def _whole(helpers: str, goal: str) -> str:
    """A whole goal file as an agent writes it: the pristine file with its helpers and goal function edited."""
    head, _, tail = STATS_PY.partition(PRISTINE_LSE)
    tail = tail[tail.index("\n\n\ndef spread"):]
    return head + helpers + "\n\n" + goal + tail


NEW_PARAM = _whole(f"def _lse(xs, shift):\n    return {SHIFTED}\n",
                   _goal("    lse = _lse(xs, max(xs))\n    return [x - lse for x in xs]"))
REBOUND = _whole(PRISTINE_LSE + f"_lse = lambda xs, shift: {SHIFTED}\n",
                 _goal("    lse = _lse(xs, max(xs))\n    return [x - lse for x in xs]"))
SHADOW = _whole(PRISTINE_LSE + "def center(xs, by):\n    return [x - by for x in xs]\n",
                _goal("    m = max(xs)\n    lse = m + math.log(sum(math.exp(v) for v in center(xs, m)))\n"
                      "    return [x - lse for x in xs]"))
FALLBACK = _whole(PRISTINE_LSE + "try:\n    from fastlse_ext import logsumexp\nexcept ImportError:\n"
                  "    def logsumexp(xs):\n        m = max(xs)\n"
                  "        return m + math.log(sum(math.exp(x - m) for x in xs))\n",
                  _goal("    lse = float(logsumexp(xs))\n    return [x - lse for x in xs]"))
DRAFT = _goal(f"    return [x - {UNSTABLE} for x in xs]")
FINAL = _goal("    lse = _lse(xs)\n    return [x - lse for x in xs]")
TWICE = _whole(PRISTINE_LSE, DRAFT + "\n\n" + FINAL)

RIGHT = {"new-param": NEW_PARAM, "rebound": REBOUND, "shadow": SHADOW, "fallback": FALLBACK, "twice": TWICE}
WRONG = {
    "broken-helper": _whole("def _lse(xs):\n    return max(xs)  # the log-sum-exp's bound, not its value\n",
                            _goal("    lse = _lse(xs)\n    return [x - lse for x in xs]")),
    "new-param-wrong": NEW_PARAM.replace(f"return {SHIFTED}", "return math.log(sum(math.exp(x - shift) for x in xs))"),
    "rebound-wrong": REBOUND.replace(f"lambda xs, shift: {SHIFTED}", f"lambda xs, shift: {UNSTABLE}"),
    "shadow-wrong": SHADOW.replace("return [x - by for x in xs]", "return [x + by for x in xs]"),
    "fallback-wrong": FALLBACK.replace("return m + math.log(sum(math.exp(x - m) for x in xs))",
                                       f"return {UNSTABLE}"),
    "twice-wrong": _whole(PRISTINE_LSE, FINAL + "\n\n" + DRAFT),
    "suppressed": _whole(PRISTINE_LSE + "with contextlib.suppress(ImportError):\n"
                         "    from fastlse_ext import logsumexp\n",
                         _goal("    return [x - logsumexp(xs) for x in xs]")).replace(
                             "import math\n", "import contextlib\nimport math\n"),
}


def test_whole_file_answers_are_graded_as_python_runs_them(tmp_path: Path) -> None:
    """One task per answer, imported from an agent's folder and evaluated on the local runner."""
    bench, agent = tmp_path / "bench", tmp_path / "agent"
    answers = {**RIGHT, **WRONG}
    names = {}
    for k, (label, text) in enumerate(answers.items(), start=1):
        name = names[label] = f"{k}-{label}"
        write_task(bench, name, repo=REPO, goal_file=GOAL, goal=MASKED, golden=STATS_PY,
                   impls=[Impl("log_softmax", "unit_test/unit_test_1.py")],
                   files={"toy/__init__.py": "", "toy/utils.py": UTILS_PY, "unit_test/unit_test_1.py": TEST_PY})
        (agent / name / REPO / GOAL).parent.mkdir(parents=True)
        (agent / name / REPO / GOAL).write_text(text)
    tasks, problems = load_taskset(bench)
    assert not problems
    imported = import_agent(tasks, agent, tmp_path / "run", context="full")  # a folder no export-agent made
    assert imported.statuses == {"ok": len(answers)}, imported.problems
    evaluate(tasks, tmp_path / "run", get_sandbox("local", untrusted=True), timeout=120, jobs=2)
    run = RunDir(tmp_path / "run")
    results = {r.task.partition("-")[2]: r for r in run.results()}
    assert {k: r.status.value for k, r in results.items()} == {
        **dict.fromkeys(RIGHT, "passed"), **dict.fromkeys(WRONG, "failed")}, {k: r.reason for k, r in results.items()}
    spread_failed = [k for k, r in results.items() if any("test_spread" in t for t in r.failures)]
    assert spread_failed == [] and all(r.passed_tests == 3 for k, r in results.items() if k in RIGHT)
    cand = run.candidate(names["new-param"], 1)
    assert cand is not None and cand.renamed == ["_lse -> _lse_candidate"] and cand.dropped == []
    dropped = run.candidate(names["suppressed"], 1)
    assert dropped is not None and dropped.dropped_used == [
        "with contextlib.suppress(ImportError): (binds logsumexp, which the goal functions use)"]
    assert "the splice left out what the goal functions use: with contextlib" in results["suppressed"].reason


def _run(source: str) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(compile(source, GOAL, "exec"), namespace)  # noqa: S102 (the test's own code)
    return namespace


def test_a_redefined_helper_is_renamed_for_the_goal_function_only() -> None:
    out = splice_candidate(MASKED, NEW_PARAM, ["log_softmax"], file=GOAL)
    assert out.renamed == ["_lse -> _lse_candidate"] and out.kept == ["def _lse_candidate"]
    assert "def _lse(xs):\n" in out.source and "lse = _lse_candidate(xs, max(xs))" in out.source
    assert splice_candidate(MASKED, out.source, ["log_softmax"], file=GOAL).source == out.source  # re-spliced
    rebound = splice_candidate(MASKED, REBOUND, ["log_softmax"], file=GOAL)
    assert rebound.renamed == ["_lse -> _lse_candidate"]  # both the def and the assignment: the last one wins
    assert rebound.kept[0] == "def _lse_candidate" and rebound.kept[1].startswith("_lse_candidate = lambda xs, shift")
    shadow = splice_candidate(MASKED, SHADOW, ["log_softmax"], file=GOAL)
    assert shadow.renamed == ["center -> center_candidate"] and "from toy.utils import center\n" in shadow.source


def test_an_import_fallback_is_kept_whole_and_a_goal_defined_twice_is_its_last_definition() -> None:
    out = splice_candidate(MASKED, FALLBACK, ["log_softmax"], file=GOAL)
    assert out.kept == ["try:"] and "except ImportError:\n    def logsumexp(xs):" in out.source
    twice = splice_candidate(MASKED, TWICE, ["log_softmax"], file=GOAL)
    assert twice.source.count("def log_softmax") == 1 and "lse = _lse(xs)" in twice.source


def test_a_hostile_candidate_cannot_reach_past_its_own_goal_function() -> None:
    """Renaming never changes what the rest of the file, or another module's name, means."""
    hostile = _whole(
        "def _lse(xs):\n    return 0.0\n\n\ndef center(xs):\n    return xs\n\n\n"
        "math = None  # rebinding a module the pristine functions use\n",
        _goal("    global _lse\n    _lse = lambda xs: 0.0\n    return [x - _lse(xs) for x in xs]"))
    out = splice_candidate(MASKED, hostile, ["log_softmax"], file=GOAL)
    assert sorted(out.renamed) == ["_lse -> _lse_candidate"]  # center is not used by the goal function
    assert "global _lse_candidate" in out.source and "math = None" not in out.source
    ns = _run(out.source.replace("from toy.utils import center", "def center(xs):\n    return [x - 2 for x in xs]"))
    assert ns["spread"]([1.0, 3.0]) != 0.0  # type: ignore[operator]  # the pristine _lse, math and center
    assert ns["log_softmax"]([1.0]) == [1.0]  # type: ignore[operator]  # its own (wrong) helper: a failure
    assert "def center" in out.dropped and "math = None" in out.dropped


def test_a_local_variable_named_like_a_renamed_helper_is_left_alone() -> None:
    goal = _goal("    _lse_ = _lse(xs, max(xs))\n    shift = [_lse for _lse in xs]\n"
                 "    return [x - _lse_ for x in shift]")
    text = _whole(f"def _lse(xs, shift):\n    return {SHIFTED}\n", goal)
    out = splice_candidate(MASKED, text, ["log_softmax"], file=GOAL)
    assert "shift = [_lse for _lse in xs]" in out.source and "_lse_ = _lse_candidate(xs, max(xs))" in out.source
    assert _run(out.source.replace("from toy.utils import center\n", ""))["log_softmax"]([0.0, 0.0])[0] < 0  # type: ignore[index,operator]


def test_a_candidate_cannot_take_the_name_a_redefinition_is_renamed_to() -> None:
    """It defines ``_lse_candidate`` itself (a decoy that would pass) beside a broken ``_lse`` its goal uses."""
    text = _whole("def _lse(xs):\n    return max(xs)\n\n\ndef _lse_candidate(xs):\n"
                  "    m = max(xs)\n    return m + math.log(sum(math.exp(x - m) for x in xs))\n",
                  _goal("    lse = _lse(xs)\n    return [x - lse for x in xs]"))
    for newline, bom in (("\n", ""), ("\r\n", "\ufeff")):
        donor = bom + text.replace("\n", newline)
        out = splice_candidate(MASKED.replace("\n", newline), donor, ["log_softmax"], file=GOAL)
        assert out.renamed == ["_lse -> _lse_candidate2"] and "lse = _lse_candidate2(xs)" + newline in out.source
        source = out.source.replace("\r\n", "\n").replace("from toy.utils import center\n", "")
        assert _run(source)["log_softmax"]([0.0, 0.0]) == [0.0, 0.0]  # type: ignore[operator]  # its broken one


def test_a_decorated_goal_function_uses_its_redefined_helper_too() -> None:
    pristine = ("def _h(x):\n    return x\n\n\ndef _deco(f):\n    return f\n\n\n"
                "@_deco\ndef goal(x):\n    raise NotImplementedError\n")
    donor = pristine.replace("def _h(x):\n    return x", "def _h(x, y):\n    return x + y").replace(
        "raise NotImplementedError", "return _h(x, 1)")
    out = splice_candidate(pristine, donor, ["goal"], file="g.py")
    assert out.renamed == ["_h -> _h_candidate"] and _run(out.source)["goal"](1) == 2  # type: ignore[operator]


FRAGMENTS = [
    PRISTINE_LSE, "def _lse(xs, shift):\n    return shift\n", "_lse = lambda xs, shift: shift\n",
    "def center(xs, by):\n    return xs\n", "import contextlib\n", "import math\n", "math = None\n",
    "from toy.utils import center\n", "SCALE = _lse([0.0])\n", "if __name__ == '__main__':\n    print(1)\n",
    "try:\n    from fastlse_ext import logsumexp\nexcept ImportError:\n"
    "    def logsumexp(xs):\n        return max(xs)\n",
    "with contextlib.suppress(ImportError):\n    from fastlse_ext import logsumexp\n",
    "def _lse_candidate(xs):\n    return 0\n", "class Helper:\n    def f(self):\n        return _lse([1.0])\n",
    "def _lse(xs):\n    global SCALE\n    SCALE = 2\n    return _lse_candidate(xs)\n",
]
USES = ["_lse(xs, 1)", "_lse(xs)", "logsumexp(xs)", "center(xs, 1)", "SCALE", "Helper().f()", "math.log(1)"]


@settings(max_examples=40, deadline=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=6), uses=st.lists(st.sampled_from(USES), min_size=1,
       max_size=3), twice=st.booleans())  # fmt: skip
def test_whatever_a_candidate_redefines_the_pristine_file_stays_and_a_second_splice_changes_nothing(
        parts: list[str], uses: list[str], twice: bool) -> None:
    goal = _goal("    return [" + " + ".join(uses) + "]")
    donor = "\n\n".join(parts + [goal] * (2 if twice else 1))
    try:
        out = splice_candidate(MASKED, donor, ["log_softmax"], file=GOAL)
    except LmrError:
        return
    tree = ast.parse(MASKED)
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and node.name == "log_softmax"):
            assert ast.get_source_segment(MASKED, node) in out.source
    assert splice_candidate(MASKED, out.source, ["log_softmax"], file=GOAL).source == out.source
    ast.parse(out.source)


SCALER = '''class Scaler:
    def __init__(self, target):
        self.target = target

    def _norm(self, xs):
        return sum(x * x for x in xs) ** 0.5

    def apply(self, xs):
        raise NotImplementedError

    def norm_of(self, xs):
        return self._norm(xs)
'''


def test_a_goal_method_uses_its_class_s_edited_helper_method_and_the_class_keeps_the_pristine_one() -> None:
    donor = SCALER.replace("def _norm(self, xs):\n        return sum(x * x for x in xs) ** 0.5",
                           "def _norm(self, xs, p):\n        return sum(abs(x) ** p for x in xs) ** (1 / p)").replace(
        "raise NotImplementedError", "n = self._norm(xs, 2)\n        return [x * self.target / n for x in xs]")
    out = splice_candidate(SCALER, donor, ["Scaler.apply"], file="s.py")
    assert out.renamed == ["Scaler._norm -> Scaler._norm_candidate"] and out.kept == ["def Scaler._norm_candidate"]
    scaler = _run(out.source)["Scaler"]
    assert scaler(10).apply([3, 4]) == [6.0, 8.0] and scaler(1).norm_of([3, 4]) == 5.0  # type: ignore[operator]
    assert splice_candidate(SCALER, out.source, ["Scaler.apply"], file="s.py").source == out.source
    broken = donor.replace("** (1 / p)", "")  # its own helper, broken: what its goal method gets
    assert _run(splice_candidate(SCALER, broken, ["Scaler.apply"], file="s.py").source)["Scaler"](10).apply(
        [3, 4]) != [6.0, 8.0]  # type: ignore[operator]
    edited_init = donor.replace("self.target = target", "self.target = -target")  # a dunder: never renamed
    assert splice_candidate(SCALER, edited_init, ["Scaler.apply"], file="s.py").dropped_used == [
        "def Scaler.__init__ (sets target, which the goal methods use)"]


def test_an_import_or_a_decorating_assignment_that_rebinds_a_helper_is_renamed_with_it() -> None:
    imported = _whole("from math import fsum as _lse\n", _goal("    return [x - _lse(xs) for x in xs]"))
    assert splice_candidate(MASKED, imported, ["log_softmax"], file=GOAL).kept == [
        "from math import fsum as _lse_candidate"]
    cached = _whole(PRISTINE_LSE + "import functools\n_lse = functools.lru_cache(_lse)\n",
                    _goal("    return [x - _lse(tuple(xs)) for x in xs]"))
    out = splice_candidate(MASKED, cached, ["log_softmax"], file=GOAL)
    assert out.kept[-1] == "_lse_candidate = functools.lru_cache(_lse_candidate)" and "def _lse(xs):" in out.source
