"""The researcher's tables: per-sample rows, the leaderboard with its intervals, the task x run matrix, pass@k
over repeated samples and the cost of each stage."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from typer.testing import CliRunner

from helpers.synthetic_runs import add_verdicts_and_labels, write_run
from lmrbench.benchmark.pipeline.rundir import RunDir, save_model
from lmrbench.benchmark.pipeline.samples import sample_path
from lmrbench.benchmark.report.leaderboard import pass_at_k
from lmrbench.benchmark.report.results import build_results
from lmrbench.cli.main import app
from lmrbench.schemas.run import EvalResult, JudgeCategory, ResultStatus, Usage

NAMES = [f"{k}-T{k}" for k in range(1, 5)]


def _spend(run: RunDir, task: str, model: str, prompt: int, completion: int) -> None:
    cand = run.candidate(task, 1)
    assert cand is not None
    usage = Usage(prompt_tokens=prompt, completion_tokens=completion, calls=1)
    save_model(run.candidate_dir(task, 1) / "candidate.json", cand.model_copy(update={"model": model, "usage": usage}))


def _report(*runs: Path, out: Path) -> str:
    result = CliRunner().invoke(app, ["report", *map(str, runs), "--out", str(out), "--no-figures"],
                                env={"COLUMNS": "80"})  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output


def test_each_sample_is_a_row_and_runs_are_ranked_with_wilson_intervals_in_80_columns(tmp_path: Path) -> None:
    weak = write_run(tmp_path / "weak", "a-local-model-with-a-rather-long-name", {n: n == "1-T1" for n in NAMES})
    strong = write_run(tmp_path / "strong", "gpt-4o", {n: n != "4-T4" for n in NAMES})
    save_model(strong.result_path("4-T4", 1), EvalResult(
        task="4-T4", impl=1, status=ResultStatus.FAILED, duration=2.5,
        candidate_digest=strong.candidate("4-T4", 1).digest,  # type: ignore[union-attr]
        failures={"unit_test/test_f.py::test_case_2": "assert 1 == 2", "unit_test/test_f.py::test_case_1": "x"}))
    for task in NAMES:
        _spend(strong, task, "gpt-4o", 1000, 100)
    _spend(weak, "1-T1", "a-local-model-with-a-rather-long-name", 50, 5)
    cc, _, li = JudgeCategory
    add_verdicts_and_labels(strong, {"1-T1": (cc, None), "4-T4": (li, None)})
    out = _report(weak.path, strong.path, out=tmp_path / "rep")

    board = out[out.index("Leaderboard"):out.index("Ranked by")]
    assert max(map(len, board.splitlines())) <= 80 and "…" not in board
    assert board.index("gpt-4o") < board.index("a-local-model")
    assert "75.0" in board and "30.1-95.4" in board and "3/4" in board  # Wilson's 95% interval of 3 of 4
    assert "25.0" in board and "4.6-69.9" in board and "unknown" in board  # an unpriced model: cost unknown

    rows = list(csv.DictReader(io.StringIO((tmp_path / "rep" / "samples.csv").read_text())))
    assert len(rows) == 8 and list(rows[0]) == ["run", "task", "impl", "sample", "status", "failing", "judge",
                                                "category", "prompt_tokens", "completion_tokens", "cost", "seconds"]
    row = next(r for r in rows if r["run"] == "gpt-4o" and r["task"] == "4-T4")
    assert row["status"] == "failed" and row["seconds"] == "2.5" and row["category"] == "LI" and row["judge"] == "j"
    assert row["failing"] == "unit_test/test_f.py::test_case_1;unit_test/test_f.py::test_case_2"
    assert float(row["cost"]) > 0 and row["prompt_tokens"] == "1000"
    weak_row = next(r for r in rows if r["run"].startswith("a-local") and r["task"] == "1-T1")
    assert weak_row["cost"] == "" and weak_row["status"] == "passed"
    lines = (tmp_path / "rep" / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 8 and json.loads(lines[0])["failing"] == [] and "cost" in json.loads(lines[0])

    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| 4-T4 | 0/1 | 0/1 |" in md and "| 2-T2 | 0/1 | 1/1 |" in md  # tasks down, runs across
    assert "## Tokens and cost by stage" in md and "| gpt-4o | generation | gpt-4o | 4 | 4000 | 400 |" in md


def test_unbiased_pass_at_k() -> None:
    assert pass_at_k(3, 0, 1) == 0.0 and pass_at_k(3, 3, 3) == 1.0
    assert abs(pass_at_k(3, 1, 1) - 1 / 3) < 1e-12 and pass_at_k(3, 1, 3) == 1.0
    assert abs(pass_at_k(5, 2, 2) - (1 - 3 / 10)) < 1e-12  # 1 - C(3,2)/C(5,2)


def test_a_run_of_samples_reports_pass_at_1_and_pass_at_k_with_an_interval(tmp_path: Path) -> None:
    passes = {"1-T1": [1, 0, 0], "2-T2": [1, 1, 1], "3-T3": [0, 0, 0], "4-T4": [0, 1, 0]}
    run = tmp_path / "sampled"
    for s in (1, 2, 3):
        write_run(sample_path(run, s), "m", {t: bool(p[s - 1]) for t, p in passes.items()})
    results = build_results([run])
    (standing,) = results.board
    assert standing.samples == 3 and (standing.passed, standing.scored) == (5, 12)
    assert abs(standing.accuracy - 100 * (1 / 3 + 1 + 0 + 1 / 3) / 4) < 1e-9  # pass@1: the mean over samples
    assert standing.pass_k == 75.0  # three of the four tasks pass in some sample
    assert standing.low is not None and standing.high is not None
    assert standing.low < standing.accuracy < standing.high
    assert {r.sample for r in results.samples} == {1, 2, 3} and len(results.samples) == 12
    out = _report(run, out=tmp_path / "rep")
    assert "pass@k %" in out and "75.0 (k=3)" in out and "5/12" in out


def test_generate_with_samples_keeps_each_and_the_report_gives_pass_at_1_and_pass_at_3(server, tmp_path) -> None:
    from helpers.run_task import WRONG_DICE, golden_def, write_taskset

    bench = write_taskset(tmp_path / "bench")
    gen = "Functions to implement, in toy/metrics.py: "
    server.on(gen + "dice", golden_def("dice"), WRONG_DICE, WRONG_DICE)  # one reply per sample, in turn
    server.on(gen + "Scaler.apply", golden_def("Scaler.apply"))
    server.on(gen + "total", "```python\nasync def total(xs):\n    return sum(xs) + 1\n```")
    run = tmp_path / "run"
    opts = ["--model", "m", "--base-url", server.base_url, "--cache-dir", str(tmp_path / "cache"), "--retries", "0",
            "--temperature", "0.8"]  # fmt: skip
    for args in (["generate", bench, "--out", run, *opts, "--samples", "3"],
                 ["evaluate", bench, run, "--sandbox", "local", "--test-timeout", "120"]):  # fmt: skip
        result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    assert len(server.matching(gen + "dice")) == 3  # no sample reused another's cached reply
    out = _report(run, out=tmp_path / "rep")
    (standing,) = build_results([run]).board
    # dice passes in 1 of 3 samples, apply in 3 of 3, total in none: pass@1 = (1/3 + 1 + 0) / 3, pass@3 = 2/3
    assert (standing.samples, standing.passed, standing.scored) == (3, 4, 9)
    assert abs(standing.accuracy - 100 * (1 / 3 + 1) / 3) < 1e-9 and abs(standing.pass_k - 200 / 3) < 1e-9
    assert "44.4" in out and "66.7 (k=3)" in out and f"{standing.low:.1f}-{standing.high:.1f}" in out
    rows = list(csv.DictReader(io.StringIO((tmp_path / "rep" / "samples.csv").read_text())))
    assert sorted((r["task"], r["impl"], r["sample"], r["status"]) for r in rows if r["impl"] == "1" and
                  r["task"] == "1-Toy") == [("1-Toy", "1", "1", "passed"), ("1-Toy", "1", "2", "failed"),
                                           ("1-Toy", "1", "3", "failed")]  # fmt: skip
