"""validate checks a task's tolerances: it re-runs the golden code in float64 and reports the margin."""

from __future__ import annotations

from rich.console import Console

from helpers.float_task import write_float_task
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.store import latest_results
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.cli.validate_cmd import print_summary
from lmrbench.schemas.task_info import CheckerSettings

ONCE = ValidateOptions(repeat=1, max_mutants=0, timeout=120)


def test_validate_reports_how_close_a_float64_rerun_came_to_the_tolerance(tmp_path):
    bench = tmp_path / "bench"
    write_float_task(bench)
    write_float_task(bench, name="6-Tight", checker=CheckerSettings(tolerance="explicit", rtol=1e-9, atol=0.0))
    summary = validate_taskset(bench, sandbox="local", options=ONCE)
    rows = {r.task: r for r in summary.rows}
    assert rows["5-FloatDPO"].valid and rows["6-Tight"].valid  # the golden is bit-identical to itself
    stored = latest_results(bench)
    sound, tight = stored[("5-FloatDPO", 1)], stored[("6-Tight", 1)]
    assert sound.tolerance_margin is not None and 0 < sound.tolerance_margin < 0.5, sound.tolerance_note
    assert rows["5-FloatDPO"].tolerance_margin == sound.tolerance_margin
    assert "a float64 re-run of the golden code used" in sound.tolerance_note
    assert tight.tolerance_margin is not None and tight.tolerance_margin > 1
    assert "falls outside, and a correct rewrite may fail" in tight.tolerance_note
    console = Console(record=True, width=220)
    print_summary(console, summary)
    table = console.export_text()
    assert "tol margin" in table and f"{tight.tolerance_margin:.0%}" in table
    assert "6-Tight#1: a float64 re-run of the golden code used" in table


def test_no_probe_for_exact_tests_or_when_turned_off(tmp_path):
    bench = tmp_path / "bench"
    write_float_task(bench, checker=CheckerSettings(kind="exact"), cases=1)
    write_float_task(bench, name="6-Off", cases=1)
    off = ValidateOptions(repeat=1, max_mutants=0, timeout=120, check_tolerances=False)
    validate_taskset(bench, sandbox="local", options=ONCE, only=["5-FloatDPO"])
    validate_taskset(bench, sandbox="local", options=off, only=["6-Off"])
    stored = latest_results(bench)
    assert stored[("5-FloatDPO", 1)].tolerance_margin is None and stored[("5-FloatDPO", 1)].tolerance_note == ""
    assert stored[("6-Off", 1)].tolerance_margin is None
