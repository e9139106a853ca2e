"""lmrbench validate: golden passes every run, masked fails, mutants die; results on disk; re-runs; Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.small_task import TEST_ADD, TEST_SCALE, tree_hash, write_task
from lmrbench.benchmark.validation.implementation import flaky_tests
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.store import SUMMARY_FILE, latest_results, result_path
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.defaults import default_run_dir
from lmrbench.errors import LmrError
from lmrbench.schemas.testrun import TestCaseResult, TestReport, TestStatus

FAST = ValidateOptions(repeat=2, max_mutants=0, timeout=120)


def local(bench: Path, opts: ValidateOptions = FAST, **kw):
    return validate_taskset(bench, sandbox="local", options=opts, **kw)


def test_a_sound_task_is_valid_and_results_are_stored(tmp_path):
    bench = tmp_path / "bench"
    task = write_task(bench, legacy=True)
    before = tree_hash(task)
    summary = local(bench)
    assert [(r.task, r.impl, r.valid) for r in summary.rows] == [("1-Calc", 1, True), ("1-Calc", 2, True),
                                                               ("1-Calc", 3, True)]
    assert all(r.golden_passes == 2 and r.masked_failed and not r.skipped for r in summary.rows)
    assert summary.golden_pass_rate == 1.0
    run_dir = default_run_dir(bench)
    files = sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*")
                   if p.is_file() and ".runs/" not in p.as_posix())  # each run's evidence: see test_regrade
    logs = [f"1-Calc/impl-{i}.logs/{run}.log" for i in (1, 2, 3) for run in ("golden-1", "golden-2", "masked")]
    assert files == sorted(["1-Calc/impl-1.json", "1-Calc/impl-2.json", "1-Calc/impl-3.json", SUMMARY_FILE, *logs])
    stored = latest_results(bench)
    # the whole output of each run is kept beside its result, which names it; the JSON keeps a tail
    masked = stored[("1-Calc", 1)].masked
    assert masked is not None and masked.log_file == "impl-1.logs/masked.log"
    assert "failed" in (run_dir / "1-Calc" / masked.log_file).read_text()
    assert stored[("1-Calc", 3)].evidence == "legacy" and stored[("1-Calc", 1)].evidence == "pytest"
    assert stored[("1-Calc", 1)].golden_passed and stored[("1-Calc", 1)].masked_failed
    assert tree_hash(task) == before


def test_a_rerun_skips_unchanged_results_and_redoes_changed_tasks(tmp_path):
    bench = tmp_path / "bench"
    task = write_task(bench)
    local(bench)
    path = result_path(default_run_dir(bench), "1-Calc", 1)
    first = path.read_bytes()
    again = local(bench)
    assert all(r.skipped for r in again.rows)
    assert path.read_bytes() == first
    forced = local(bench, ValidateOptions(repeat=2, max_mutants=0, force=True))
    assert not any(r.skipped for r in forced.rows)
    (task / "calc" / "unit_test" / "unit_test_2.py").write_text(TEST_SCALE + "\n\ndef test_more():\n"
                                                                "    assert scale([1], 0) == [0]\n")
    changed = local(bench)
    assert not any(r.skipped for r in changed.rows)  # the task's files changed: every impl is redone
    assert local(bench, ValidateOptions(repeat=1, max_mutants=0)).rows[0].skipped is False


def test_a_scaffold_with_todos_is_refused_without_running(tmp_path):
    bench = tmp_path / "bench"
    todo = TEST_ADD + "\n# LMRBENCH-TODO: record the cases of add\n"
    write_task(bench, tests={"unit_test/unit_test_1.py": todo, "unit_test/unit_test_2.py": TEST_SCALE})
    summary = local(bench)
    row = summary.rows[0]
    assert not row.valid and "LMRBENCH-TODO" in row.reasons[0]
    assert "unit_test/unit_test_1.py" in row.reasons[0]
    assert latest_results(bench)[("1-Calc", 1)].golden_runs == []
    assert summary.rows[1].valid


def test_recorded_data_left_as_git_lfs_pointers_is_named_with_the_fix_without_running(tmp_path):
    bench = tmp_path / "bench"
    reads = TEST_ADD + "\n\nCASES = 'unit_test/data/cases.pkl'\n"
    task = write_task(bench, tests={"unit_test/unit_test_1.py": reads, "unit_test/unit_test_2.py": TEST_SCALE})
    data = task / "calc" / "unit_test" / "data" / "cases.pkl"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"a" * 64 + b"\nsize 912\n")
    summary = local(bench)
    row = summary.rows[0]
    assert row.verdict == "not run" and row.not_run is not None and row.not_run.cause == "lfs"
    assert "calc/unit_test/data/cases.pkl" in row.not_run.detail and "git lfs pull" in row.not_run.fix
    assert latest_results(bench)[("1-Calc", 1)].golden_runs == []
    assert summary.rows[1].verdict == "yes"  # its tests read no pointer: it runs
    assert summary.golden_ran == 1 and summary.golden_pass_rate == 1.0


def test_an_implementation_without_tests_is_not_run_and_left_out_of_the_golden_pass_rate(tmp_path):
    bench = tmp_path / "bench"
    write_task(bench, tests={"unit_test/unit_test_2.py": TEST_SCALE})
    summary = local(bench)
    first, second = summary.rows
    assert first.verdict == "not run" and first.not_run is not None and first.not_run.cause == "no_tests"
    assert "lmrbench task record" in first.not_run.fix and first.reasons == [] and not first.valid
    assert second.valid and second.verdict == "yes"
    assert summary.golden_ran == 1 and summary.golden_pass_rate == 1.0


def test_weak_and_wrong_tests_make_the_task_invalid(tmp_path):
    bench = tmp_path / "bench"
    weak = "def test_add():\n    assert True\n"
    wrong = TEST_SCALE.replace("[2, 4, 6]", "[2, 4, 7]")
    write_task(bench, tests={"unit_test/unit_test_1.py": weak, "unit_test/unit_test_2.py": wrong})
    rows = local(bench).rows
    assert rows[0].reasons == ["the masked code passes the tests"]
    assert rows[1].golden_passes == 0 and rows[1].reasons[0].startswith("golden run 1 failed")
    assert local(bench).golden_pass_rate == 0.5


def test_a_golden_body_left_in_the_repository_makes_the_task_invalid(tmp_path):
    bench = tmp_path / "bench"
    task = write_task(bench)
    draft = "Draft:\n\n    out = []\n    for x in xs:\n        out.append(x * k)\n    return out\n"
    (task / "calc" / "notes.md").write_text(draft)
    rows = local(bench).rows
    assert rows[0].valid
    assert not rows[1].valid and rows[1].reasons == ["the golden body is still in the repository: notes.md"]


def test_flaky_tests_are_the_ones_whose_outcome_differs():
    def report(*outcomes: str, status: TestStatus = TestStatus.PASSED) -> TestReport:
        cases = [TestCaseResult(test_id=f"t{i}", outcome=o, duration=0.1) for i, o in enumerate(outcomes)]
        return TestReport(status=status, cases=cases, sandbox="local")

    assert flaky_tests([report("passed", "passed"), report("passed", "passed")]) == []
    failed = report("passed", "failed", status=TestStatus.FAILED)
    assert flaky_tests([report("passed", "passed"), failed]) == ["t1"]
    timed_out = TestReport(status=TestStatus.TIMEOUT, sandbox="local")
    assert flaky_tests([report("passed"), timed_out]) == ["(whole run: passed, timeout)"]


def test_mutants_are_run_and_the_kill_rate_reported(tmp_path):
    bench = tmp_path / "bench"
    weak_scale = "from calc import scale\n\n\ndef test_scale():\n    assert len(scale([1, 2], 3)) == 2\n"
    write_task(bench, tests={"unit_test/unit_test_1.py": TEST_ADD, "unit_test/unit_test_2.py": weak_scale})
    summary = local(bench, ValidateOptions(repeat=1, max_mutants=6, min_kill_rate=0.9))
    add, scale = summary.rows
    assert add.mutants_total > 0 and add.mutants_killed == add.mutants_total and add.valid
    assert scale.mutants_total > 0 and scale.mutants_killed < scale.mutants_total
    assert scale.valid and scale.weak and not add.weak and scale.reasons == []  # valid, but weak
    assert scale.kill_rate is not None and scale.kill_rate < 0.9 and add.kill_rate == 1.0
    stored = latest_results(bench)[("1-Calc", 2)]
    alive = [m for m in stored.mutants if not m.killed]
    assert alive and scale.survivors == [f"{m.name}: {m.description}" for m in alive]
    assert all(m.name.startswith("M") and m.diff.startswith("--- a/calc.py") for m in stored.mutants)
    assert all("-        out.append(x * k)" in m.diff or "return" in m.diff for m in alive)
    # the threshold is a reading of the stored result: a lower one drops the kill rate from the reasons, but a
    # surviving mistake (`x * k` as `x / k`) still makes the tests weak, named with what would kill it
    low = local(bench, ValidateOptions(repeat=1, max_mutants=6, min_kill_rate=0.1)).rows[1]
    [swap] = [r for r in low.weak_reasons if "* becomes / in 'x * k'" in r]
    assert low.weak and swap.endswith("passes; a case where the right operand in 'x * k' is not 1 or -1 would kill it")


def test_bad_options_and_run_folder_inside_a_task(tmp_path):
    bench = tmp_path / "bench"
    task = write_task(bench)
    with pytest.raises(LmrError, match="--repeat"):
        local(bench, ValidateOptions(repeat=0))
    with pytest.raises(LmrError, match="inside a task folder"):
        local(bench, run_dir=task / "results")
    assert not (task / "results").exists()


def test_cli_prints_the_table_and_exits_non_zero_on_an_invalid_task(tmp_path):
    from lmrbench.cli.main import app

    bench = tmp_path / "bench"
    write_task(bench, tests={"unit_test/unit_test_1.py": TEST_ADD, "unit_test/unit_test_2.py": "x = 1\n"})
    runner = CliRunner()
    args = ["--sandbox", "local", "--repeat", "1", "--max-mutants", "0"]
    res = runner.invoke(app, ["validate", str(bench), *args])
    assert res.exit_code == 1, res.output
    for text in ("golden", "masked", "mutants", "1-Calc", "golden pass rate: 1/2 that ran (50.0%); 0 not run"):
        assert text in res.output
    other = ["--out", str(tmp_path / "other")]
    ok = runner.invoke(app, ["validate", str(bench), "--task", "1", *args, *other])
    assert ok.exit_code == 1  # same task, new run folder: validated again, still invalid
    assert json.loads((tmp_path / "other" / SUMMARY_FILE).read_text())["rows"][0]["valid"] is True


def test_cli_bad_sandbox_is_one_line_error(tmp_path):
    write_task(tmp_path / "bench")
    proc = subprocess.run([sys.executable, "-c", "from lmrbench.cli.main import main; main()", "validate",
                           str(tmp_path / "bench"), "--sandbox", "podman"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown sandbox 'podman'" in proc.stderr


def test_ctrl_c_with_the_local_runner_kills_the_running_tests(tmp_path):
    bench = tmp_path / "bench"
    pids = tmp_path / "pids"
    pids.mkdir()
    mark = f"open(os.path.join({str(pids)!r}, str(os.getpid())), 'w').close()"
    hang = f"import os, time\n\n\ndef test_hangs():\n    {mark}\n    time.sleep(600)\n"
    write_task(bench, "5-Hang", tests={"unit_test/unit_test_1.py": hang, "unit_test/unit_test_2.py": hang})
    write_task(bench, "6-Hang", tests={"unit_test/unit_test_1.py": hang, "unit_test/unit_test_2.py": hang})
    code = "from lmrbench.cli.main import main; main()"
    argv = [sys.executable, "-c", code, "validate", str(bench), "--sandbox", "local", "--jobs", "2",
            "--max-mutants", "0", "--test-timeout", "300"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.3)
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) == 2, proc.communicate(timeout=30)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    for pid in started:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    run_dir = default_run_dir(bench)
    leftovers = [p.name for p in run_dir.rglob("*")] if run_dir.exists() else []
    assert not [n for n in leftovers if n.endswith((".json", ".tmp")) and n.startswith("impl-")], leftovers
    # what was killed is kept as the specs it started with, not ended: no result of it is taken as one
    specs = sorted(run_dir.glob("*/impl-*.started/*/run-*/spec.json"))
    assert specs and all(json.loads(p.read_text())["ended"] is False for p in specs), leftovers


def test_cli_shows_a_weak_task_apart_with_its_kill_rate_and_surviving_mutants(tmp_path):
    bench = tmp_path / "bench"
    weak_scale = "from calc import scale\n\n\ndef test_scale():\n    assert scale([1, 2], 3) is not None\n"
    write_task(bench, tests={"unit_test/unit_test_1.py": TEST_ADD, "unit_test/unit_test_2.py": weak_scale})
    exe = Path(sys.executable).parent / "lmrbench"
    proc = subprocess.run([str(exe), "validate", str(bench), "--sandbox", "local", "--repeat", "1",
                           "--max-mutants", "6"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "1-Calc#2 is valid but weak: its tests kill 2/6 mutants (33%), below --min-kill-rate 75%" in out
    assert "mutants of 1-Calc#2 killed by kind: arith_swap 0/1, constant_return 1/2," in out
    assert "1-Calc#1 is valid but weak" not in out
    assert "surviving mutants of 1-Calc#2:" in out and "--- a/calc.py" in out
    assert "valid: 1/2, valid but weak: 1/2" in out
    doc = json.loads(result_path(default_run_dir(bench), "1-Calc", 2).read_text())
    assert doc["weak"] is True and any(not m["killed"] and m["diff"] for m in doc["mutants"])


def test_an_environment_that_cannot_be_prepared_is_a_typed_error_that_is_tried_again(tmp_path):
    """The result says it in ``environment_error`` (no reason carries a marker to be parsed), counts apart from
    the golden pass rate, and is never reused."""
    bench = tmp_path / "bench"
    task = write_task(bench, dockerfile=False)
    (task / "requirements.txt").write_text("--pre\nnumpy\n")  # a pip option lmrbench does not take
    summary = local(bench)
    assert all(not r.valid and "--pre" in r.environment_error for r in summary.rows), summary.rows
    assert all(not r.reasons[0].startswith("environment:") for r in summary.rows)
    assert summary.golden_pass_rate is None  # nothing ran: no rate to give
    stored = latest_results(bench)
    assert all(res.environment_error for res in stored.values())
    assert [r.skipped for r in local(bench).rows] == [False, False]  # an environment error is tried again
