"""End to end through the CLI: generate, evaluate, judge and report two runs; what the report counts."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.llm_server import LLMServer, status
from helpers.run_task import HOSTILE_DICE, WRONG_DICE, golden_def, write_taskset
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.scoreboard import build_report
from lmrbench.cli.main import app
from lmrbench.errors import LmrError

GEN = "Functions to implement, in toy/metrics.py: "
CC = json.dumps({"category": 3, "rationale": ["Matches the reference."]})
LC = json.dumps({"category": 2, "rationale": ["Close, one detail differs."]})
LI = json.dumps({"category": 1, "rationale": ["Different logic."]})


def cli(*args: str | Path, code: int = 0) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output  # 3: problems left for a re-run
    return result.output


def llm_opts(server: LLMServer, model: str, cache: Path) -> list[str]:
    return ["--model", model, "--base-url", server.base_url, "--cache-dir", str(cache), "--retries", "0"]


def test_generate_evaluate_judge_report_end_to_end(server, tmp_path) -> None:
    bench = write_taskset(tmp_path / "bench")
    cache = tmp_path / "cache"
    for fn, qual in (("dice", "dice"), ("Scaler.apply", "Scaler.apply"), ("total", "total")):
        server.on(GEN + fn, golden_def(qual))
    cli("generate", bench, "--out", tmp_path / "gold", *llm_opts(server, "gold", cache))
    server.on(GEN + "dice", HOSTILE_DICE)
    server.on(GEN + "Scaler.apply", WRONG_DICE)
    server.on(GEN + "total", "```python\nasync def total(xs):\n    return sum(xs) + 1\n```")
    cli("generate", bench, "--out", tmp_path / "bad", *llm_opts(server, "bad", cache))

    for run in ("gold", "bad"):
        out = cli("evaluate", bench, tmp_path / run, "--sandbox", "local", "--test-timeout", "120")
        assert "evaluate:" in out
    # a scripted judge: Completely Correct for the golden code, otherwise by what it sees
    server.on("Implement dice as in the paper.", CC)
    server.on("Implement apply as in the paper.", CC)
    server.on("Implement total as in the paper.", CC)
    server.on("NOTE TO THE GRADER", LI)
    server.on("return sum(xs) + 1", LC)
    for run in ("gold", "bad"):
        cli("judge", bench, tmp_path / run, *llm_opts(server, "the-judge", cache))

    out = cli("report", tmp_path / "gold", tmp_path / "bad", "--out", tmp_path / "report")
    assert "Unit tests and LLM judge" in out
    rows = list(csv.DictReader(io.StringIO((tmp_path / "report" / "report.csv").read_text())))
    by_run = {r["run"]: r for r in rows}
    gold, bad = by_run["gold"], by_run["bad"]
    assert (gold["accuracy"], gold["cc_pct"], gold["lc_pct"], gold["li_pct"]) == (
        "100.0",
        "100.0",
        "0.0",
        "0.0",
    )
    assert gold["judge"] == "the-judge" and gold["passed"] == "3" and gold["infra_errors"] == "0"
    assert int(gold["generation_tokens"]) > 0 and int(gold["judge_tokens"]) > 0
    # hostile dice fails and is judged LI; apply had no function (LI); total is off by one (fails, LC)
    assert (bad["accuracy"], bad["passed"], bad["failed"]) == ("0.0", "0", "3")
    assert (bad["cc"], bad["lc"], bad["li"], bad["no_verdict"]) == ("0", "1", "2", "0")

    md = (tmp_path / "report" / "report.md").read_text()
    assert "| gold | full | 100.0 | 3 | 3 | 0 | 0 | the-judge | 100.0 | 0.0 | 0.0 | 0 |" in md
    assert "| Evaluation Metrics | 100.0 (2/2) | 0.0 (0/2) |" in md
    assert "| Neural Network Architectures | 100.0 (1/1) | 0.0 (0/1) |" in md
    data = json.loads((tmp_path / "report" / "report.json").read_text())
    manifest = data["runs"]["gold"]
    assert manifest["generation"]["model"] == "gold" and manifest["prompt_version"] == "standard-3"
    assert manifest["judges"]["the-judge"]["prompt_version"] == "judge-2"
    assert manifest["sandbox"] == "local" and manifest["tool_version"]
    assert [len(t["digest"]) for t in manifest["tasks"]] == [64, 64] and all(
        t["env_id"] for t in manifest["tasks"]
    )


def test_report_keeps_infra_errors_pending_and_no_verdicts_apart(server, tmp_path) -> None:
    bench = write_taskset(tmp_path / "bench")
    cache = tmp_path / "cache"
    server.on(GEN + "dice", status(500))
    server.on(GEN + "Scaler.apply", golden_def("Scaler.apply"))
    server.on(GEN + "total", golden_def("total"))
    run = tmp_path / "run"
    cli("generate", bench, "--out", run, *llm_opts(server, "m", cache), "--task", "1", code=3)
    cli("evaluate", bench, run, "--sandbox", "local", "--test-timeout", "120", code=3)
    cli("generate", bench, "--out", run, *llm_opts(server, "m", cache), "--task", "2")  # not evaluated yet
    server.on("Implement apply as in the paper.", "not json at all")
    server.on("Implement total as in the paper.", CC)
    cli("judge", bench, run, *llm_opts(server, "j", cache), "--attempts", "2", code=3)
    row = build_report([run]).rows[0]
    assert (row.implementations, row.passed, row.failed, row.infra_errors, row.pending) == (3, 1, 0, 1, 1)
    assert row.accuracy == 100.0  # infra errors and pending results are not wrong answers
    assert (row.cc, row.lc, row.li, row.no_verdict, row.judged) == (1, 0, 0, 1, 1)
    shutil.rmtree(run / "candidates" / "2-Async")  # as if generation had stopped before it
    row = build_report([run]).rows[0]
    assert (row.implementations, row.pending, row.accuracy) == (3, 1, 100.0)
    with pytest.raises(LmrError, match="no verdicts of judge 'other' \\(judges here: j\\)"):
        build_report([run], judge="other")


def test_report_of_a_folder_that_is_not_a_run_is_one_line(tmp_path) -> None:
    exe = str(Path(sys.executable).with_name("lmrbench"))
    env = {**os.environ, "COLUMNS": "400"}
    proc = subprocess.run([exe, "report", str(tmp_path)], capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    expected = f"error: {tmp_path}: not a run folder (no run.json); make one with generate or import-agent"
    assert proc.stderr.strip().splitlines() == [expected]


def test_runs_that_share_a_label_stay_apart_by_their_folders(tmp_path) -> None:
    from lmrbench import __version__
    from lmrbench.benchmark.pipeline.rundir import save_model
    from lmrbench.benchmark.report.scoreboard import category_table
    from lmrbench.schemas.run import EvalResult, ResultStatus, RunManifest

    paths = [tmp_path / parent / "run" for parent in ("x", "y", "z")]
    for k, path in enumerate(paths):
        RunDir(path).save_manifest(RunManifest(tool_version=__version__, source="agent", label="a"))
        for impl in (1, 2):
            status = ResultStatus.PASSED if impl <= k else ResultStatus.FAILED
            save_model(RunDir(path).result_path("1-Toy", impl),
                       EvalResult(task="1-Toy", impl=impl, category="Evaluation Metrics", status=status))  # fmt: skip
    report = build_report(paths)
    assert [r.run for r in report.rows] == ["a (x/run)", "a (y/run)", "a (z/run)"]
    assert [r.passed for r in report.rows] == [0, 1, 2]
    headers, rows = category_table(report)
    assert headers == ["Category", "a (x/run)", "a (y/run)", "a (z/run)"]
    assert rows == [["Evaluation Metrics", "0.0 (0/2)", "50.0 (1/2)", "100.0 (2/2)"]]
