"""Unit-test evaluation, local runner: pass, fail, hostile candidates, infra errors, kill and resume."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.llm_server import LLMServer, status
from helpers.run_task import HELPER_REPLY, HOSTILE_DICE, REPO, WRONG_DICE, golden_def, write_taskset
from lmrbench.benchmark.execution.sandboxes import get_sandbox
from lmrbench.benchmark.pipeline.evaluate import evaluate
from lmrbench.benchmark.pipeline.generate import generate
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.files import render_csv
from lmrbench.benchmark.report.scoreboard import build_report
from lmrbench.cli.main import app
from lmrbench.core.taskset import load_taskset
from lmrbench.schemas.run import LLMParams

DICE = "Functions to implement, in toy/metrics.py: dice"
APPLY = "Functions to implement, in toy/metrics.py: Scaler.apply"
TOTAL = "Functions to implement, in toy/metrics.py: total"
LMRBENCH = str(Path(sys.executable).with_name("lmrbench"))


@pytest.fixture(scope="module")
def sandbox():
    return get_sandbox("local")


def gen(server: LLMServer, bench: Path, run: Path, replies: dict[str, str]) -> None:
    for match, text in replies.items():
        server.on(match, text)
    tasks, problems = load_taskset(bench)
    assert not problems
    params = LLMParams(model="m", base_url=server.base_url)
    with LLMClient(LLMConfig(params=params, cache_dir=None, max_retries=0)) as client:
        generate(tasks, run, client)


def statuses(run: Path) -> dict[tuple[str, int], str]:
    return {(r.task, r.impl): r.status.value for r in RunDir(run).results()}


def test_golden_passes_wrong_fails_hostile_never_passes(server, sandbox, tmp_path) -> None:
    bench = write_taskset(tmp_path / "bench")
    tests_before = {p: p.read_bytes() for p in bench.rglob("unit_test_*.py")}
    gen(server, bench, tmp_path / "good", {DICE: golden_def("dice"), APPLY: golden_def("Scaler.apply"),
                                           TOTAL: golden_def("total")})  # fmt: skip
    gen(server, bench, tmp_path / "bad", {DICE: HOSTILE_DICE, APPLY: WRONG_DICE, TOTAL: golden_def("total")})
    tasks, _ = load_taskset(bench)
    good = evaluate(tasks, tmp_path / "good", sandbox, timeout=120)
    assert good.statuses == {"passed": 3}
    bad = evaluate(tasks, tmp_path / "bad", sandbox, timeout=120)
    assert statuses(tmp_path / "bad") == {
        ("1-Toy", 1): "failed",
        ("1-Toy", 2): "failed",
        ("2-Async", 1): "passed",
    }
    hostile = RunDir(tmp_path / "bad").result("1-Toy", 1)
    assert hostile is not None and hostile.passed_tests == 0
    # the whole test output is kept beside the result (the JSON keeps a tail), and the result names the file
    log = RunDir(tmp_path / "bad").result_path("1-Toy", 1).parent / hostile.log_file
    assert hostile.log_file == "1.log" and log.is_file() and hostile.log_tail.strip()[-200:] in log.read_text()
    assert "no_function" in RunDir(tmp_path / "bad").result("1-Toy", 2).reason  # type: ignore[union-attr]
    assert bad.statuses == {"failed": 2, "passed": 1}
    assert {p: p.read_bytes() for p in bench.rglob("unit_test_*.py")} == tests_before
    manifest = RunDir(tmp_path / "good").require_manifest()
    assert manifest.sandbox == "local" and all(t.env_id for t in manifest.tasks)
    # each tested candidate keeps what its result was decided from, and regrade derives the same results from it
    assert (RunDir(tmp_path / "bad").evidence_dir("1-Toy", 1) / "run-1" / "junit.xml").is_file()
    again = CliRunner().invoke(app, ["regrade", str(tmp_path / "bad")])
    out = " ".join(again.output.split())
    assert again.exit_code == 0, out
    assert "stored: 2 failed, 1 passed" in out and "every verdict is the same" in out
    stored = out.split("stored: ")[1].split(" regraded:")[0]
    assert f"regraded: {stored}" in out


def test_infra_errors_are_apart_and_retried_and_changed_candidates_redone(server, sandbox, tmp_path) -> None:
    bench = write_taskset(tmp_path / "bench")
    run = tmp_path / "run"
    gen(server, bench, run, {DICE: status(503), APPLY: golden_def("Scaler.apply"), TOTAL: WRONG_DICE})
    tasks, _ = load_taskset(bench)
    evaluate(tasks, run, sandbox, timeout=120)
    assert statuses(run)[("1-Toy", 1)] == "infra_error"
    row = build_report([run]).rows[0]
    assert (row.passed, row.failed, row.infra_errors, row.accuracy) == (1, 1, 1, 50.0)

    server.on(DICE, golden_def("dice"))
    server.on(TOTAL, golden_def("total"))
    gen(server, bench, run, {})  # asks again where the endpoint failed; the reply without `total` stands
    first = {k: RunDir(run).result(*k).model_dump() for k in [("1-Toy", 2)]}  # type: ignore[union-attr]
    again = evaluate(tasks, run, sandbox, timeout=120)
    assert again.skipped == 2 and again.statuses == {"passed": 1}
    assert statuses(run) == {("1-Toy", 1): "passed", ("1-Toy", 2): "passed", ("2-Async", 1): "failed"}
    assert RunDir(run).result("1-Toy", 2).model_dump() == first[("1-Toy", 2)]  # type: ignore[union-attr]

    RunDir(run).result_path("2-Async", 1).write_text("{ broken")  # a damaged result file is redone
    third = evaluate(tasks, run, sandbox, timeout=120)
    assert third.skipped == 2 and third.statuses == {"failed": 1}
    assert statuses(run)[("2-Async", 1)] == "failed"


def test_kept_helpers_survive_evaluation(server, sandbox, tmp_path) -> None:
    bench = write_taskset(tmp_path / "bench")
    replies = {DICE: golden_def("dice"), APPLY: golden_def("Scaler.apply"), TOTAL: HELPER_REPLY}
    gen(server, bench, tmp_path / "helpers", replies)
    tasks, _ = load_taskset(bench, only=["2"])
    evaluate(tasks, tmp_path / "helpers", sandbox, timeout=120)
    assert statuses(tmp_path / "helpers") == {("2-Async", 1): "passed"}


def _big_bench(root: Path, copies: int) -> Path:
    bench = write_taskset(root / "bench")
    for k in range(3, 3 + copies):
        shutil.copytree(bench / "1-Toy", bench / f"{k}-Toy")
    return bench


def _evaluate_cli(bench: Path, run: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [LMRBENCH, "evaluate", str(bench), str(run), "--sandbox", "local", "--jobs", "1", "--test-timeout", "120"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_interrupted_evaluate_resumes_to_the_same_table(server, sandbox, tmp_path, sig) -> None:
    bench = _big_bench(tmp_path, copies=3)
    replies = {DICE: golden_def("dice"), APPLY: WRONG_DICE, TOTAL: golden_def("total")}
    gen(server, bench, tmp_path / "whole", replies)
    shutil.copytree(tmp_path / "whole", tmp_path / "cut")
    tasks, _ = load_taskset(bench)
    evaluate(tasks, tmp_path / "whole", sandbox, timeout=120)
    expected = render_csv(build_report([tmp_path / "whole"]))
    total = len(list((tmp_path / "whole" / "results").rglob("*.json")))
    assert total == 9

    proc = _evaluate_cli(bench, tmp_path / "cut")
    results = tmp_path / "cut" / "results"
    deadline = time.time() + 240
    while time.time() < deadline and len(list(results.rglob("*.json"))) < 2:
        assert proc.poll() is None, proc.stdout.read().decode()  # type: ignore[union-attr]
        time.sleep(0.05)
    proc.send_signal(sig)
    out = proc.communicate(timeout=120)[0].decode()
    done = len(list(results.rglob("*.json")))
    assert 2 <= done < total, out
    assert len(RunDir(tmp_path / "cut").results()) == done  # every result file is whole

    again = _evaluate_cli(bench, tmp_path / "cut")
    out2 = again.communicate(timeout=300)[0].decode()
    assert again.returncode == 0, out2
    assert f"{done} already done" in out2
    assert len(list(results.rglob("*.json"))) == total
    assert render_csv(build_report([tmp_path / "cut"])).replace("cut", "whole") == expected
    assert (tmp_path / "cut" / "candidates" / "1-Toy" / "1" / REPO).is_dir()
