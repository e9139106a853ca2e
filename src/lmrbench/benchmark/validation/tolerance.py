"""Checking a task's tolerances: re-run the golden code on the recorded inputs in float64 and measure how close it
comes to each tolerance (the margin).

In that run (``LMRBENCH_TOLERANCE_PROBE`` set) the recorded cases hand the golden code float64 copies of their
floating inputs, and the checkers measure ``max |rerun - recorded| / (atol + rtol * |recorded|)`` instead of
judging, ending each test with ``lmrbench-tolerance-margin <m> at <where>``. A margin near 1 means a more precise
computation of the same formula barely fits: a correct rewrite in another order of operations may not.
"""

from __future__ import annotations

import re

from lmrbench.runtime.lmrbench_precision import PROBE_ENV, PROBE_MARK
from lmrbench.schemas.task_info import Implementation
from lmrbench.schemas.testrun import TestReport

PROBE_RUN_ENV = {PROBE_ENV: "float64"}
"""The environment of the probing golden run."""
TIGHT_MARGIN = 0.5
"""A margin above this is named: a correct rewrite may round twice as far from the recording as float64 does."""
_MARGIN = re.compile(re.escape(PROBE_MARK) + r" (\S+) at (.*)")
_PRECISION = re.compile(r"precision: recorded on (.*?), graded on (.*?); .*the largest difference is (\S+) times")


def probe_wanted(impl: Implementation) -> bool:
    """True when the implementation's tests compare numbers with a tolerance (recorded tests, not exact)."""
    return impl.checker is not None and impl.checker.kind != "exact"


def read_margins(report: TestReport) -> tuple[float | None, str]:
    """(the largest margin any test measured, a one-line note) from the probing run's report."""
    found: list[tuple[float, str]] = []
    raised: list[str] = []
    for case in report.cases:
        match = _MARGIN.search(case.message)
        if match:
            try:
                found.append((float(match.group(1)), f"{case.test_id.rpartition('::')[2]}, {match.group(2)}"))
            except ValueError:
                continue
        elif case.outcome in ("failed", "error"):
            first = case.message.splitlines()[0] if case.message else case.outcome
            raised.append(f"{case.test_id.rpartition('::')[2]}: {first}")
    if not found:
        why = raised[0] if raised else report.detail or "no checker measured a margin"
        return None, f"the float64 re-run measured nothing ({why})"[:300]
    margin, where = max(found)
    note = f"a float64 re-run of the golden code used {margin:.1%} of the tolerance ({where})"
    if margin > 1:
        note += ": it falls outside, and a correct rewrite may fail; widen the checker's rtol in info.json"
    elif margin > TIGHT_MARGIN:
        note += ": tight, a correct rewrite in another order may fail"
    if raised:
        note += f"; {len(raised)} tests could not re-run in float64, first {raised[0]}"
    return margin, note[:400]


def precision_sensitive(report: TestReport) -> str | None:
    """The reason to give when a golden run fails its own recording only because it ran in another precision
    (another device, TF32 or autocast where the case was recorded without, or the reverse): which test, the two
    precisions and the measured margin (how many times its tolerance the largest difference is). None when no
    failing test says so, or the precisions are the same (then the failure is not the precision's)."""
    for case in report.cases:
        if case.outcome not in ("failed", "error"):
            continue
        match = _PRECISION.search(case.message)
        if match and match.group(1) != match.group(2):
            test = case.test_id.rpartition("::")[2]
            return (f"precision-sensitive: the golden code fails its own recording in {test} (recorded on "
                    f"{match.group(1)}, graded on {match.group(2)}): the largest difference is {match.group(3)} "
                    "times its tolerance; record the task where it is graded, or widen the checker's tolerance")
    return None
