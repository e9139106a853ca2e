"""The official results layout: import, export back to the same records, hand-computed agreement, bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from helpers.official_fixture import ANALYSES, CONFUSION, EXPECTED, expected_records, write_official
from lmrbench.benchmark.labels.agreement import agreement
from lmrbench.benchmark.labels.official import export_official, import_official
from lmrbench.benchmark.labels.official_files import parse_analysis
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.errors import LmrError
from lmrbench.schemas.run import JudgeCategory


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_import_makes_one_run_per_agent_and_model_and_never_touches_the_input(tmp_path) -> None:
    results = write_official(tmp_path / "results")
    before = tree_digest(results)
    summary = import_official(results, tmp_path / "runs")
    assert sorted(summary.runs) == ["no_agent-gpt4o", "openhands_agent-gpt4o"]
    assert summary.labels == 8 and summary.verdicts == 8 and summary.annotators == ["alice", "bob", "carol", "dave"]
    assert len(summary.warnings) == 1 and "'dave'" in summary.warnings[0] and "0-2" in summary.warnings[0]
    base = RunDir(tmp_path / "runs" / "no_agent-gpt4o")
    labels = {(lab.annotator, lab.task, lab.impl): lab for lab in base.labels()}
    assert labels[("dave", "05-Eps", 1)].label is JudgeCategory.COMPLETELY_CORRECT  # raw 2 on 0-2 -> 3
    assert labels[("alice", "01-Alpha", 2)].label is JudgeCategory.LOGICALLY_CORRECT  # function_index 1 -> impl 2
    assert labels[("alice", "01-Alpha", 1)].note == "alice on paper 1"
    verdict = base.verdict("official", "02-Beta", 1)
    assert verdict is not None and verdict.category is JudgeCategory.LOGICALLY_CORRECT  # the last of two objects
    assert verdict.rationale == ["judge says 2"]
    assert base.verdict("official", "01-Alpha", 2).category is JudgeCategory.LOGICALLY_CORRECT  # bare digit
    # Importing again shifts nothing twice and changes no input byte.
    import_official(results, tmp_path / "runs")
    assert tree_digest(results) == before
    again = {(lab.annotator, lab.task, lab.impl): lab.label for lab in base.labels()}
    assert again == {k: v.label for k, v in labels.items()}


def test_export_gives_back_the_same_records_and_analyses(tmp_path) -> None:
    results = write_official(tmp_path / "results")
    summary = import_official(results, tmp_path / "runs")
    out = tmp_path / "exported"
    exported = export_official(list(summary.runs.values()), out)
    assert exported.records == 8 and exported.analyses == 8
    records = []
    for path in sorted((out / "human_evaluation").glob("*.json")):
        records += json.loads(path.read_text())
    assert sorted(records, key=lambda r: json.dumps(r, sort_keys=True)) == expected_records()
    names = {p.name for p in (out / "human_evaluation").iterdir()}
    assert names == {"alice.json", "bob.json", "carol.json", "dave.json"}
    for folder, task, repo, fi, _, _ in ANALYSES:
        rel = Path("llm_as_a_judge_evaluation") / folder / "gpt4o" / f"{task}_{repo}_{fi}_analysis.txt"
        assert (out / rel).read_text() == (results / rel).read_text()
    # The exported folder imports to the same labels, with no 0-2 warning this time.
    again = import_official(out, tmp_path / "runs2")
    assert again.warnings == [] and again.labels == 8


def test_agreement_of_the_fixture_matches_the_hand_computed_figures(tmp_path) -> None:
    summary = import_official(write_official(tmp_path / "results"), tmp_path / "runs")
    report = agreement(list(summary.runs.values()))
    hj = report.human_vs_judge
    assert hj.n == EXPECTED["n"]
    for key in ("exact", "cohen_kappa", "weighted_kappa", "binary"):
        assert getattr(hj, key) == pytest.approx(EXPECTED[key]), key
    assert hj.confusion == CONFUSION
    assert report.inter_annotator.items == 0 and report.inter_annotator.krippendorff_alpha is None  # disjoint papers
    assert report.human_vs_tests.n == 0 and report.human_vs_tests.exact is None
    assert report.by_model["no_agent-gpt4o"].human_vs_judge.n == 6
    assert report.by_model["openhands_agent-gpt4o"].human_vs_judge.exact == pytest.approx(0.5)
    assert "median" in report.method and "majority" in report.method


def write_human(results: Path, name: str, labels: list[int]) -> Path:
    folder = results / "human_evaluation"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps([
        {"annotator": name, "agent_type": "no_agent", "model_name": "m", "paper_index": k + 1,
         "function_index": 0, "human_judge_result": v, "comment": ""}
        for k, v in enumerate(labels)
    ]))  # fmt: skip
    return path


@pytest.mark.parametrize(
    ("labels", "record"),
    [([1, 2, 4], 2), ([0, 2, 3], 0), ([-1, 1, 2], 0), ([3, 3, 7], 2)],
)
def test_an_out_of_range_label_is_an_error_naming_file_and_record(tmp_path, labels, record) -> None:
    path = write_human(tmp_path / "results", "erin", labels)
    with pytest.raises(LmrError) as err:
        import_official(tmp_path / "results", tmp_path / "runs")
    assert str(path) in str(err.value) and f"record {record}" in str(err.value) and "outside 1-3" in str(err.value)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("*.json"))


def test_a_malformed_record_is_an_error_naming_the_file(tmp_path) -> None:
    path = write_human(tmp_path / "results", "erin", [1])
    path.write_text(json.dumps([{"annotator": "erin", "agent_type": "robot", "model_name": "m", "paper_index": 1,
                                 "function_index": 0, "human_judge_result": 1}]))  # fmt: skip
    with pytest.raises(LmrError, match="agent_type 'robot'") as err:
        import_official(tmp_path / "results", tmp_path / "runs")
    assert str(path) in str(err.value)
    with pytest.raises(LmrError, match="holds neither"):
        import_official(tmp_path / "nothing", tmp_path / "runs")


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ('{"category": "2", "rationale": ["x"]}', 2),
        ('{"category": 3}\nlater: {"category": "1"}', 1),
        ("Long analysis.\n\n3", 3),
        ("Long analysis ending with a version 0.3", None),
        ("Category: 13", None),
        ('{"category": "4"}', None),
        ("no verdict at all", None),
    ],
)
def test_parse_analysis_takes_the_last_category_or_a_final_bare_digit(text, score) -> None:
    assert parse_analysis(text)[0] == score


def test_import_with_the_task_set_names_tasks_and_categories(tmp_path) -> None:
    from helpers.run_task import write_taskset

    bench = write_taskset(tmp_path / "bench")
    results = tmp_path / "results"
    write_human(results, "erin", [])
    (results / "human_evaluation" / "erin.json").write_text(json.dumps([
        {"annotator": "erin", "agent_type": "no_agent", "model_name": "m", "paper_index": 1, "function_index": 1,
         "human_judge_result": 2, "comment": "scaler"},
        {"annotator": "erin", "agent_type": "no_agent", "model_name": "m", "paper_index": 2, "function_index": 0,
         "human_judge_result": 3, "comment": ""},
    ]))  # fmt: skip
    judged = results / "llm_as_a_judge_evaluation" / "BaseAgent" / "m"
    judged.mkdir(parents=True)
    (judged / "1-Toy_toy_repo_1_analysis.txt").write_text('{"category": "2", "rationale": ["ok"]}')
    (judged / "2-Async_toy_repo_0_analysis.txt").write_text("Looks right.\n3")
    summary = import_official(results, tmp_path / "runs", bench=bench)
    run = RunDir(summary.runs["no_agent-m"])
    assert {(lab.task, lab.impl) for lab in run.labels()} == {("1-Toy", 2), ("2-Async", 1)}
    report = agreement([run.path])
    assert report.human_vs_judge.exact == 1.0
    assert set(report.by_category) == {"Neural Network Architectures", "Evaluation Metrics"}
    out = tmp_path / "out"
    export_official([run.path], out)
    back = json.loads((out / "human_evaluation" / "erin.json").read_text())
    assert [(r["paper_index"], r["function_index"]) for r in back] == [(1, 1), (2, 0)]
    assert (out / "llm_as_a_judge_evaluation" / "BaseAgent" / "m" / "1-Toy_toy_repo_1_analysis.txt").is_file()


def test_export_of_a_run_made_here_writes_the_paper_scale(tmp_path) -> None:
    from helpers.labels_run import write_review_run
    from lmrbench.benchmark.labels.store import LabelStore

    _, run = write_review_run(tmp_path)
    LabelStore(RunDir(run), "alice").save("1-Toy", 1, 1, note="constant")
    export_official([run], tmp_path / "out")
    judged = tmp_path / "out" / "llm_as_a_judge_evaluation" / "BaseAgent" / "toy-model"
    # Our judge numbers completely correct 1; the official files number it 3.
    assert parse_analysis((judged / "1-Toy_toy_repo_0_analysis.txt").read_text())[0] == 1
    assert parse_analysis((judged / "1-Toy_toy_repo_1_analysis.txt").read_text())[0] == 3
    assert parse_analysis((judged / "2-Async_toy_repo_0_analysis.txt").read_text())[0] == 2
    (record,) = json.loads((tmp_path / "out" / "human_evaluation" / "alice.json").read_text())
    assert record == {"annotator": "alice", "agent_type": "no_agent", "model_name": "toy-model", "paper_index": 1,
                      "function_index": 0, "human_judge_result": 1, "comment": "constant"}  # fmt: skip


def test_report_of_imported_runs_sets_judge_and_human_shares_side_by_side(tmp_path) -> None:
    from lmrbench.benchmark.report.scoreboard import build_report, human_table

    summary = import_official(write_official(tmp_path / "results"), tmp_path / "runs")
    report = build_report(sorted(summary.runs.values()))
    # no_agent: judge 3,2,2,3,3,3 and humans 3,2,1,3,2,3; openhands: judge 1,2 and humans 1,1.
    assert human_table(report) == [
        ["no_agent-gpt4o", "official", "66.7", "33.3", "0.0", "6", "50.0", "33.3", "16.7"],
        ["openhands_agent-gpt4o", "official", "0.0", "50.0", "50.0", "2", "0.0", "0.0", "100.0"],
    ]
