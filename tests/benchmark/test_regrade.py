"""Every validation run keeps its evidence; `lmrbench regrade` derives the same verdicts from it with nothing run."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.small_task import write_task
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.store import evidence_dir, started_dir
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.cli.main import app
from lmrbench.defaults import default_run_dir
from lmrbench.errors import LmrError
from lmrbench.harness import evidence
from lmrbench.harness.evidence import RunEvidence, read_unit, write_unit
from lmrbench.harness.regrade import decide_unit
from lmrbench.schemas.evidence import RunSpec, UnitRecord
from lmrbench.schemas.testrun import TestReport, TestStatus
from lmrbench.schemas.validation import ValidationSummary


@pytest.fixture(scope="module")
def validated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ValidationSummary]:
    """A task set of three implementations (two split pytest ones, one official script-style) validated with
    the local runner: one golden run, the masked run and one mutant each."""
    bench = tmp_path_factory.mktemp("regrade") / "bench"
    write_task(bench, legacy=True)
    opts = ValidateOptions(repeat=1, max_mutants=1, timeout=120)
    return bench, validate_taskset(bench, sandbox="local", options=opts)


def regrade(bench: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """``lmrbench regrade bench`` with Docker unreachable and no process allowed to start."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"regrade started a process: {args}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    result = CliRunner().invoke(app, ["regrade", str(bench)])
    return result.exit_code, " ".join(result.output.split())


def test_every_run_keeps_its_evidence_and_regrade_gives_the_same_figures(validated, monkeypatch) -> None:
    bench, summary = validated
    run_dir = default_run_dir(bench)
    assert summary.golden_pass_rate == 1.0 and all(r.valid for r in summary.rows)
    for row in summary.rows:
        folder = evidence_dir(run_dir, row.task, row.impl)
        units = sorted(p.name for p in folder.iterdir() if p.is_dir())
        assert units == ["golden-1", "masked", "mutant-1"]
        assert not started_dir(run_dir, row.task, row.impl).exists()  # what each run started is kept as evidence
        for unit in units:
            run = folder / unit / "run-1"
            spec = json.loads((run / "spec.json").read_text())
            assert spec["test_files"] and spec["sandbox"] == "local" and spec["ended"]
            assert spec["variant"] == unit.split("-")[0] and spec["trusted"] and spec["tree"]
            assert spec["key"] == "" and spec["wrapped_key"] and spec["auth"]  # the key is kept wrapped, not here
            reports = ["legacy.json"] if row.impl == 3 else ["junit.xml", "seal.json"]
            assert all((run / name).stat().st_size > 0 for name in reports)
            assert (run / "output.log").read_text().strip()  # the whole output, not a tail
    kills = sum(r.mutants_killed for r in summary.rows)
    total = sum(r.mutants_total for r in summary.rows)
    assert total == 3

    code, out = regrade(bench, monkeypatch)
    assert code == 0, out
    assert "regraded 3/3 implementations" in out
    assert "golden pass rate: stored 3/3 that ran (100.0%), regraded 3/3 that ran (100.0%)" in out
    assert f"mutants killed: stored {kills}/{total}, regraded {kills}/{total}" in out
    assert "every verdict is the same" in out
    as_json = CliRunner().invoke(app, ["regrade", str(bench), "--format", "json"])
    figures = json.loads(as_json.stdout)  # the same figures, alone on stdout
    assert as_json.exit_code == 0 and figures["same"] and figures["regraded_rate"] == 1.0
    assert sum(r["mutants_killed"] for r in figures["regraded"]) == kills and figures["changed"] == []


def test_an_implementation_that_never_ran_counts_in_no_rate(validated, tmp_path, monkeypatch) -> None:
    from helpers.vec_task import write_small_task

    bench = tmp_path / "bench"
    shutil.copytree(validated[0], bench)
    empty = write_small_task(bench, name="2-Empty").repo_dir
    shutil.rmtree(empty)
    empty.mkdir()  # a submodule never checked out
    summary = validate_taskset(bench, sandbox="local", options=ValidateOptions(repeat=1, max_mutants=1, timeout=120))
    assert [r.task for r in summary.rows if r.not_run] == ["2-Empty"]

    code, out = regrade(bench, monkeypatch)
    assert code == 0, out
    assert "regraded 4/4 implementations" in out  # its check was decided from no run, and is again
    assert "golden pass rate: stored 3/3 that ran (100.0%), regraded 3/3 that ran (100.0%)" in out


def test_a_tampered_report_changes_the_regraded_verdict_and_missing_evidence_is_named(
    validated, tmp_path, monkeypatch
) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(validated[0], bench)
    units = evidence_dir(default_run_dir(bench), "1-Calc", 1)
    junit = units / "golden-1" / "run-1" / "junit.xml"
    text = junit.read_text()
    assert "<failure" not in text
    junit.write_text(text.replace("</testcase>", '<failure message="edited" /></testcase>', 1)
                     if "</testcase>" in text else text.replace("/>", '><failure message="edited" /></testcase>', 1))
    shutil.rmtree(evidence_dir(default_run_dir(bench), "1-Calc", 2))

    code, out = regrade(bench, monkeypatch)
    assert code == 1
    # the edited report is no longer as the machine's seal key tagged it: named, and not derived again
    assert "not regraded: 1-Calc#1:" in out and "no longer sealed: run-1/junit.xml" in out
    assert "changed:" not in out
    assert "not regraded: 1-Calc#2:" in out and "no evidence kept" in out


def test_a_changed_decision_is_measured_on_the_stored_runs_without_running_them(validated, monkeypatch) -> None:
    from lmrbench.harness import regrade as harness_regrade

    decide = harness_regrade.decide

    def stricter(res, junit, seal, key, expected_ids, **kw):  # say a rule now refuses impl 2's tests
        report = decide(res, junit, seal, key, expected_ids, **kw)
        if report.passed and any("unit_test_2" in i for i in expected_ids or []):
            return report.model_copy(update={"status": TestStatus.FAILED, "detail": "a stricter rule"})
        return report

    monkeypatch.setattr(harness_regrade, "decide", stricter)
    code, out = regrade(validated[0], monkeypatch)
    assert code == 1
    assert "changed: 1-Calc#2 golden run 1: passed -> failed" in out
    assert "golden pass rate: stored 3/3 that ran (100.0%), regraded 2/3 that ran (66.7%)" in out
    assert "1-Calc#1" not in out.split("changed:", 1)[1]  # the others' verdicts stand


def test_kept_files_are_capped_at_their_end_and_a_cut_report_is_never_decided_again(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(evidence, "MAX_FILE", 64)
    spec = RunSpec(kind="pytest", argv=["python", "-m", "pytest"], test_files=["t.py"], timeout=5, sandbox="local",
                   key="00" * 32, exit_code=0)
    junit = b"<testsuites>" + b" " * 100 + b"</testsuites>"
    run = RunEvidence(spec, {"junit.xml": junit, "seal.json": b"{}"}, output="x" * 100 + "END")
    record = UnitRecord(purpose="golden", ordinal=1, isolation="split",
                        report=TestReport(status=TestStatus.PASSED, sandbox="local"))
    write_unit(tmp_path / "golden-1", record, [run])
    again, runs = read_unit(tmp_path / "golden-1")
    assert again.runs == 1 and runs[0].output == ("x" * 100 + "END")[-64:]
    assert runs[0].spec.truncated == ["junit.xml", "output.log"] and runs[0].files["seal.json"] == b"{}"
    with pytest.raises(LmrError, match="junit.xml was kept cut to the size cap"):
        decide_unit(again, runs)
