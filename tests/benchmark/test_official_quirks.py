"""The official results and task set as they really are: padded names, broken tasks, unit-test results.txt."""

from __future__ import annotations

import pytest

from helpers.official_quirks import GOLDEN_SLOC, write_quirky_bench, write_quirky_results
from lmrbench.benchmark.analysis.outcomes import outcomes
from lmrbench.benchmark.analysis.regression import collect
from lmrbench.benchmark.analysis.structure import structure
from lmrbench.benchmark.labels.agreement import agreement
from lmrbench.benchmark.labels.official import export_official, import_official
from lmrbench.benchmark.labels.official_units import parse_results_txt
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.scoreboard import build_report, category_table
from lmrbench.core.taskset import load_taskset
from lmrbench.schemas.run import ResultStatus


@pytest.fixture
def imported(tmp_path):
    bench = write_quirky_bench(tmp_path / "bench")
    results = write_quirky_results(tmp_path / "results")
    return bench, results, import_official(results, tmp_path / "runs", bench=bench)


def test_padded_and_unpadded_names_join_and_every_label_keeps_its_verdict(imported) -> None:
    bench, _, summary = imported
    assert summary.labels == 8 and summary.verdicts == 8
    report = agreement(list(summary.runs.values()))
    assert report.human_vs_judge.n == 8 and report.human_vs_judge.exact == pytest.approx(6 / 8)
    run = RunDir(summary.runs["openhands_agent-m1"])
    assert {lab.task for lab in run.labels()} == {"01-Alpha", "02-Beta", "03-Gamma", "04-Sub"}
    assert {v.task for v in run.verdicts("official")} == {"01-Alpha", "02-Beta", "03-Gamma", "04-Sub"}
    assert set(report.by_category) == {"Evaluation Metrics"}  # every item found its task, none uncategorized


def test_a_broken_task_is_skipped_with_a_line_and_what_was_left_out_is_named(imported) -> None:
    _, results, summary = imported
    (line,) = summary.skipped_tasks
    assert "05-Broken" in line and "info.json" in line
    text = "\n".join(summary.not_imported)
    for left_out in ("logs/ (1 files)", "analysis.ipynb", ".ipynb_checkpoints", "summary.txt (1 files)"):
        assert left_out in text, left_out
    assert f"{results}/unit_test_evaluation/OpenHands/m2/results.txt: says 4 log files, its lines give 3" in text
    assert "repeats 2-Beta implementation 1" in text


def test_unit_test_results_become_outcomes_that_report_and_agreement_read(imported) -> None:
    _, _, summary = imported
    assert summary.unit_results == 5 + 3
    m1 = RunDir(summary.runs["openhands_agent-m1"])
    status = {(r.task, r.impl): r.status for r in m1.results()}
    assert status == {
        ("01-Alpha", 1): ResultStatus.PASSED,  # "PASS fail_count: 0"
        ("02-Beta", 1): ResultStatus.FAILED,
        ("02-Beta", 2): ResultStatus.PASSED,  # plain "PASS"
        ("03-Gamma", 1): ResultStatus.FAILED,  # its log folder was missing
        ("04-Sub", 1): ResultStatus.FAILED,  # unit_test.log: the first implementation
    }
    assert all(r.weaker_evidence for r in m1.results())
    report = build_report(sorted(summary.runs.values()))
    rows = {r.run: r for r in report.rows}
    assert (rows["openhands_agent-m1"].passed, rows["openhands_agent-m1"].failed) == (2, 3)
    assert rows["openhands_agent-m1"].accuracy == pytest.approx(40.0) and rows["openhands_agent-m1"].pending == 0
    assert rows["openhands_agent-m1"].cc == 1 and rows["openhands_agent-m1"].judged == 5
    assert rows["openhands_agent-m2"].accuracy == pytest.approx(100 / 3) and rows["openhands_agent-m2"].judge == ""
    assert rows["no_agent-m1"].accuracy is None and rows["no_agent-m1"].pending == 0  # judged, no results.txt
    headers, cats = category_table(report)
    assert cats == [["Evaluation Metrics", "40.0 (2/5)", "33.3 (1/3)"]]
    assert headers == ["Category", "openhands_agent-m1", "openhands_agent-m2"]
    hvt = agreement([m1.path]).human_vs_tests
    assert hvt.n == 5 and hvt.exact == pytest.approx(3 / 5)


def test_the_regression_joins_imported_outcomes_with_the_structure_of_measurable_tasks(imported) -> None:
    bench, _, summary = imported
    m1 = RunDir(summary.runs["openhands_agent-m1"])
    assert outcomes(m1, "tests") == {("01-Alpha", 1): True, ("02-Beta", 1): False, ("02-Beta", 2): True,
                                     ("03-Gamma", 1): False, ("04-Sub", 1): False}  # fmt: skip
    tasks, _ = load_taskset(bench)
    rows, problems = structure(tasks)
    assert [p.path for p in problems] == [str(bench / "04-Sub" / "sub")]
    assert {r.goal_lines for r in rows} == {GOLDEN_SLOC}
    obs, notes = collect([m1.path], rows, "tests")
    assert len(obs) == 4 and "1 observation(s)" in notes[0]


def test_export_gives_back_the_names_the_results_used(imported, tmp_path) -> None:
    _, results, summary = imported
    export_official([summary.runs["openhands_agent-m1"]], tmp_path / "back")
    back = sorted(p.name for p in (tmp_path / "back" / "llm_as_a_judge_evaluation" / "OpenHands" / "m1").iterdir())
    orig = sorted(p.name for p in (results / "llm_as_a_judge_evaluation" / "OpenHands" / "m1").glob("*_analysis.txt"))
    assert back == orig


def test_results_txt_lines_of_every_shape(tmp_path) -> None:
    text = (
        "1-DPO/unit_test_1.log: PASS\n16-KnowProb/unit_test_4.log: PASS fail_count: 0\n"
        "18-MassActiv/unit_test.log: FAIL (found 3 failure lines)\n"
        "/h/x/outputs/OpenHands/o4mini/13-DecBound/DecBound-main/unit_test/logs is not a directory\n"
        "something else entirely\n\nTotal log files: 4\nPassed files:    2\n"
    )
    parsed = parse_results_txt(text, "openhands_agent", "o4mini", tmp_path / "results.txt")
    assert [(o.task, o.impl, o.passed) for o in parsed.outcomes] == [
        ("1-DPO", 1, True), ("16-KnowProb", 4, True), ("18-MassActiv", 1, False), ("13-DecBound", None, False),
    ]  # fmt: skip
    assert (parsed.declared_total, parsed.declared_passed) == (4, 2)
    assert parsed.unread == ["line 5: something else entirely"]


def test_runs_of_models_the_paper_did_not_run_are_set_beside_nothing(imported) -> None:
    from lmrbench.benchmark.report.files import render_markdown
    from lmrbench.benchmark.report.paper_table import against_paper

    _, _, summary = imported
    report = build_report(sorted(summary.runs.values()))
    assert against_paper(report) == []
    assert "## Against the paper's Table 2" not in render_markdown(report)  # the fixture's models are not the paper's


def test_unit_test_results_export_and_import_back_to_the_same_outcomes(imported, tmp_path) -> None:
    _, results, summary = imported
    runs = sorted(summary.runs.values())
    exported = export_official(runs, tmp_path / "back")
    assert len(exported.unit_files) == 2
    m1 = (tmp_path / "back" / "unit_test_evaluation" / "OpenHands" / "m1" / "results.txt").read_text()
    original = (results / "unit_test_evaluation" / "OpenHands" / "m1" / "results.txt").read_text()
    assert sorted(m1.splitlines()[:5]) == sorted(original.splitlines()[:5])  # the same lines, in the script's order
    assert "Total log files: 5\nPassed files:    2\n" in m1
    again = import_official(tmp_path / "back", tmp_path / "runs2")  # no --bench: the names the results used
    before = {(r.task, r.impl, r.status) for r in RunDir(summary.runs["openhands_agent-m1"]).results()}
    after = {(r.task, r.impl, r.status) for r in RunDir(again.runs["openhands_agent-m1"]).results()}
    padded = {("0" + t if t[1] == "-" else t, i, s) for t, i, s in after}
    assert padded == before


def test_a_run_made_here_exports_its_outcomes_in_the_scripts_format(tmp_path) -> None:
    from lmrbench.benchmark.labels.official_units import results_txt
    from lmrbench.schemas.run import EvalResult

    text = results_txt([
        EvalResult(task="1-Toy", impl=1, status=ResultStatus.PASSED, passed_tests=2, total_tests=2),
        EvalResult(task="1-Toy", impl=2, status=ResultStatus.FAILED, passed_tests=1, total_tests=3),
        EvalResult(task="2-Async", impl=1, status=ResultStatus.INFRA_ERROR),
    ], {})  # fmt: skip
    assert text.splitlines()[:2] == [
        "1-Toy/unit_test_1.log: PASS",
        "1-Toy/unit_test_2.log: FAIL (found 2 failure lines)",
    ]
    parsed = parse_results_txt(text, "openhands_agent", "m", tmp_path / "results.txt")
    assert (parsed.declared_total, parsed.declared_passed, parsed.unread) == (2, 1, [])
