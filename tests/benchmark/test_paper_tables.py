"""The paper's Table 2 and Table 3 beside the report's own cells, each difference with its cause."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from helpers.paper_results import write_paper_results
from helpers.synthetic_runs import add_verdicts_and_labels, write_run
from lmrbench.benchmark.labels.official import import_official
from lmrbench.benchmark.report.files import render_markdown
from lmrbench.benchmark.report.paper_figures import CITATION, PAPER_TASKS, PaperRow, paper_model, paper_row
from lmrbench.benchmark.report.paper_table import against_paper, off_paper_line
from lmrbench.benchmark.report.scoreboard import build_report, settings_table
from lmrbench.cli.main import app
from lmrbench.schemas.run import JudgeCategory, LLMParams, OfficialSource, RunManifest

SWAPPED = "exactly the paper's {} row, and {}'s are this row's: the two rows look swapped"
CAUSES = {
    ("no_agent-gpt4o", "unit"): "no data published: the official results hold no results.txt for BaseAgent/gpt4o",
    ("no_agent-o4mini", "unit"): "no data published: the official results hold no results.txt for BaseAgent/o4mini",
    **{("no_agent-gpt4.1", c): SWAPPED.format("o4-mini", "no_agent-o4mini") for c in ("h_cc", "h_lc", "h_li")},
    **{("no_agent-o4mini", c): SWAPPED.format("GPT-4.1", "no_agent-gpt4.1") for c in ("h_cc", "h_lc", "h_li")},
    **{("openhands_agent-gpt4o", c): "own count (CC 1, LC 3, LI 24 of 28): the paper's counts are these with 1 "
       "moved from LC to CC" for c in ("cc", "lc")},  # fmt: skip
    ("openhands_agent-gpt4.1", "unit"): "results.txt (unit_test_evaluation/OpenHands/gpt4.1/results.txt) has 10 of "
    "28; the paper's 32.1% is 9 of 28",
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper")
    summary = import_official(write_paper_results(root / "results"), root / "runs")
    return sorted(summary.runs.values())


def test_every_cell_of_table_2_is_set_beside_the_paper_and_each_difference_has_its_cause(runs) -> None:
    checks = against_paper(build_report(runs))
    assert len(checks) == 42 and {c.table for c in checks} == {"Table 2"}
    assert sum(c.agrees for c in checks) == 31 and sum(c.count is None for c in checks) == 2
    differ = {(c.run, c.column): c.cause for c in checks if not c.agrees}
    assert set(differ) == set(CAUSES)
    for key, cause in CAUSES.items():
        assert cause in differ[key], key
    assert all(not c.cause for c in checks if c.agrees)


def test_report_prints_and_writes_the_comparison_with_the_papers_figures(runs, tmp_path) -> None:
    result = CliRunner().invoke(app, ["report", *map(str, runs), "--out", str(tmp_path / "rep"), "--no-figures"],
                                env={"COLUMNS": "80"})  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Table 2 (Yan et al. 2025): 42 cells of 6 runs: 31 agree, 9 differ, 2 have no data" in out
    assert ("differs: Table 2, openhands_agent-gpt4.1, unit-test accuracy: paper 32.1%, here 10/28 = 35.7%. "
            "Cause: the files' own count") in out  # fmt: skip
    assert "differs: Table 2, no_agent-gpt4o, unit-test accuracy: paper 39.3%, here no data. Cause: no data" in out
    table = out[out.index("Against the paper's Table 2") : out.index("Table 2 (Yan")]
    assert "…" not in table and max(map(len, table.splitlines())) <= 80
    assert "paper: OpenHands" in table
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Against the paper's Table 2" in md and CITATION in md
    assert "| openhands_agent-gpt4.1 | 35.7* | 17.9 | 14.3 | 67.9 | 32.1 | 25.0 | 42.9 |" in md
    assert "|   paper: OpenHands (GPT-4.1) | 32.1 | 17.9 | 14.3 | 67.9 | 32.1 | 25.0 | 42.9 |" in md
    assert md.count("- Table 2, ") == 11


@pytest.mark.parametrize(
    ("name", "model"),
    [("gpt-4.1", "GPT-4.1"), ("openai/gpt-4o-2024-08-06", "GPT-4o"), ("o4mini", "o4-mini"), ("gpt4.1", "GPT-4.1"),
     ("gpt-4o-mini", None), ("gpt-4.1-mini", None), ("gpt-4-1106", None), ("claude3.7", None)],
)  # fmt: skip
def test_a_model_id_names_the_papers_model_or_none(name, model) -> None:
    assert paper_model(name) == model


def test_runs_made_here_map_to_the_papers_rows_by_source_model_and_setting() -> None:
    gen = RunManifest(tool_version="0", source="generate", generation=LLMParams(model="gpt-4o", base_url=""))
    assert paper_row(gen) == PaperRow("standard", "GPT-4o")
    agent = RunManifest(tool_version="0", source="agent", label="openhands-o4-mini", settings={"context": "paper-only"})
    assert paper_row(agent) == PaperRow("agent", "o4-mini", "paper-only")
    assert paper_row(RunManifest(tool_version="0", source="agent", label="my-agent")) is None
    src = OfficialSource(agent_type="openhands_agent", model_name="claude3.7", judge_folder="OpenHands")
    assert paper_row(RunManifest(tool_version="0", source="agent", official=src)) is None


def test_table_3_has_the_judges_columns_per_setting_and_an_agent_run_is_set_beside_the_papers_row(tmp_path) -> None:
    names = list(PAPER_TASKS)  # the paper's task set: its figures are comparable
    full = write_run(tmp_path / "full", "gpt-4.1", dict.fromkeys(names, True))
    only = write_run(tmp_path / "only", "gpt-4.1", {n: k == 0 for k, n in enumerate(names)}, context="paper-only")
    manifest = only.require_manifest()
    only.save_manifest(manifest.model_copy(update={"source": "agent", "generation": None,
                                                   "label": "openhands-gpt-4.1"}))  # fmt: skip
    cc, lc, li = JudgeCategory
    for run in (full, only):
        add_verdicts_and_labels(run, {names[0]: (cc, None), names[1]: (lc, None), names[2]: (li, None),
                                      names[3]: (li, None)})  # fmt: skip
    report = build_report([full.path, only.path])
    headers, rows = settings_table(report)  # type: ignore[misc]
    assert headers == ["Setting", "Model", "Judge", "Unit test acc. (%)", "CC (%)", "LC (%)", "LI (%)"]
    assert rows == [["full", "gpt-4.1", "j", "100.0 (29/29)", "25.0", "25.0", "50.0"],
                    ["paper-only", "openhands-gpt-4.1", "j", "3.4 (1/29)", "25.0", "25.0", "50.0"]]  # fmt: skip
    checks = {(c.table, c.column): c for c in against_paper(report)}
    assert {t for t, _ in checks} == {"Table 2", "Table 3"}  # full: standard GPT-4.1; paper-only: OpenHands GPT-4.1
    unit = checks[("Table 3", "unit")]
    assert (unit.paper, unit.count, unit.row.name) == (32.1, (1, 29), "Paper-only OpenHands (GPT-4.1)")
    assert unit.cause == ("the run's own count: the run has 1 of 29; the paper's 32.1% is no count of 29; the "
                          "paper's figures are of 28")  # fmt: skip
    assert "## Against the paper's Table 3" in render_markdown(report)


def test_the_appendix_i_table_is_a_report_of_its_own_beside_the_papers(runs, tmp_path) -> None:
    import json

    result = CliRunner().invoke(app, ["label", "binary", *map(str, runs), "--json", str(tmp_path / "b.json")],
                                env={"COLUMNS": "80"})  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = {r["run"]: r for r in json.loads((tmp_path / "b.json").read_text())["rows"]}
    assert (rows["openhands_agent-o4mini"]["cc"], rows["openhands_agent-o4mini"]["agrees"]) == (11, True)  # 39.29
    assert (rows["openhands_agent-gpt4o"]["cc"], rows["openhands_agent-gpt4o"]["paper"]) == (6, 7.14)
    out = result.output
    assert ("differs: openhands_agent-gpt4o (OpenHands (GPT-4o)): the paper's Table 6 figure (7.14% = 2 of 28) "
            "contradicts its own Table 2, which gives 21.4% human CC for OpenHands (GPT-4o); the run agrees with "
            "Table 2") in out  # fmt: skip
    assert "21.4% human CC for GPT-4.1; the run agrees with Table 2's o4-mini row" not in out
    assert "32.1% human CC for GPT-4.1; the run agrees with Table 2's o4-mini row" in out  # the swapped rows
    assert out.count("differs: ") == 5 and "…" not in out


def test_a_run_of_another_task_set_is_not_set_beside_the_papers_figures_and_one_line_says_so(tmp_path) -> None:
    names = [f"{k}-T{k}" for k in range(1, 4)]
    run = write_run(tmp_path / "gpt", "gpt-4.1", {n: k == 0 for k, n in enumerate(names)})
    report = build_report([run.path])
    assert against_paper(report) == []
    line = off_paper_line(report)
    assert line is not None and line.startswith("not compared with the paper's tables: gpt-4.1 covers 3 tasks")
    result = CliRunner().invoke(app, ["report", str(run.path), "--no-figures"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "differs:" not in result.output and result.output.count("not compared with the paper's tables") == 1
    md = (run.path / "report.md").read_text()
    assert "## Against the paper's" not in md and "Not compared with the paper's tables: gpt-4.1" in md
    as_json = CliRunner().invoke(app, ["report", str(run.path), "--no-figures", "--format", "json"])
    assert as_json.exit_code == 0, as_json.output  # the report alone on stdout, as report.json holds it
    assert json.loads(as_json.stdout) == json.loads((run.path / "report.json").read_text())
