"""lmrbench validate with the Docker runner: jobs, Ctrl-C, build failures, results kept apart from the local
runner's."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmark.test_validate import FAST, local
from helpers.small_task import TEST_ADD, write_task
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.store import latest_results
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.defaults import default_run_dir
from lmrbench.harness.sandbox import Sandbox


@pytest.mark.docker
def test_docker_validate_with_two_jobs(tmp_path, base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    bench = tmp_path / "bench"
    write_task(bench, "1-Calc")
    write_task(bench, "2-Calc", legacy=True)
    summary = validate_taskset(bench, sandbox=Sandbox(DockerRunner(base_image=base_image)),
                               options=ValidateOptions(repeat=2, max_mutants=2, jobs=2, timeout=120))
    assert summary.sandbox == "docker"
    assert [(r.task, r.impl) for r in summary.rows] == [("1-Calc", 1), ("1-Calc", 2), ("2-Calc", 1),
                                                         ("2-Calc", 2), ("2-Calc", 3)]
    assert all(r.valid and r.golden_passes == 2 for r in summary.rows), summary.rows


HANGING = "import time\n\n\ndef test_hangs():\n    time.sleep(600)\n"


@pytest.mark.docker
def test_ctrl_c_leaves_no_container_and_no_half_written_result(tmp_path, base_image, docker_engine):
    from helpers.docker_engine import owned_containers

    bench = tmp_path / "bench"
    hanging = {"unit_test/unit_test_1.py": HANGING, "unit_test/unit_test_2.py": HANGING}
    write_task(bench, "5-Hang", tests=hanging)
    write_task(bench, "6-Hang", tests=hanging)
    code = "from lmrbench.cli.main import main; main()"
    argv = [sys.executable, "-c", code, "validate", str(bench), "--sandbox", "docker", "--jobs", "2",
            "--max-mutants", "0"]
    proc = subprocess.Popen([*argv, "--test-timeout", "300"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def ours() -> list[object]:
        return owned_containers(docker_engine, proc.pid)

    deadline = time.monotonic() + 120
    while len(ours()) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)
    assert len(ours()) == 2, proc.communicate(timeout=30)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert ours() == []
    run_dir = default_run_dir(bench)
    leftovers = [p.name for p in run_dir.rglob("*")] if run_dir.exists() else []
    assert not [n for n in leftovers if n.endswith((".json", ".tmp")) and n.startswith("impl-")], leftovers
    # what was killed is kept as the specs it started with, not ended: no result of it is taken as one
    specs = sorted(run_dir.glob("*/impl-*.started/*/run-*/spec.json"))
    assert specs and all(json.loads(p.read_text())["ended"] is False for p in specs), leftovers


@pytest.mark.docker
def test_a_dockerfile_that_fails_to_build_spoils_only_its_task(tmp_path, base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    bench = tmp_path / "bench"
    write_task(bench, "1-Calc")
    broken = write_task(bench, "2-Broken")
    dockerfile = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo boom-in-build && exit 3\n"
    (broken / "Dockerfile").write_text(dockerfile)
    sandbox = Sandbox(DockerRunner(base_image=base_image))
    opts = ValidateOptions(repeat=1, max_mutants=0, timeout=120)
    summary = validate_taskset(bench, sandbox=sandbox, options=opts)
    rows = {(r.task, r.impl): r for r in summary.rows}
    assert rows[("1-Calc", 1)].valid and rows[("1-Calc", 2)].valid
    broken = rows[("2-Broken", 1)]
    assert not broken.valid and broken.reasons[0].startswith("not run: its environment could not be prepared")
    assert "2-Broken" in broken.environment_error and "boom-in-build" in broken.environment_error
    again = validate_taskset(bench, sandbox=sandbox, options=opts)
    assert [r.skipped for r in again.rows] == [True, True, False, False]  # build failures are retried


@pytest.mark.docker
def test_results_of_the_local_runner_are_not_reused_for_docker(tmp_path, base_image):
    bench = tmp_path / "bench"
    write_task(bench)
    opts = ValidateOptions(repeat=1, max_mutants=0, timeout=120)
    assert [r.skipped for r in local(bench, opts).rows] == [False, False]
    assert [r.skipped for r in local(bench, opts).rows] == [True, True]
    docker = validate_taskset(bench, sandbox="docker", options=opts)
    assert [r.skipped for r in docker.rows] == [False, False]
    assert {r.sandbox for r in latest_results(bench).values()} == {"docker"}
    assert [r.skipped for r in validate_taskset(bench, sandbox="docker", options=opts).rows] == [True, True]


@pytest.mark.docker
def test_a_todo_scaffold_is_refused_before_the_environment_is_built(tmp_path, base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    bench = tmp_path / "bench"
    todo = TEST_ADD + "\n# LMRBENCH-TODO: record the cases of add\n"
    task = write_task(bench, tests={"unit_test/unit_test_1.py": todo})
    (task / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo building && exit 3\n")
    info = json.loads((task / "info.json").read_text())
    info["implementations"] = info["implementations"][:1]
    (task / "info.json").write_text(json.dumps(info))
    summary = validate_taskset(bench, sandbox=Sandbox(DockerRunner(base_image=base_image)), options=FAST)
    (row,) = summary.rows
    assert not row.valid and len(row.reasons) == 1 and "LMRBENCH-TODO" in row.reasons[0]
    assert summary.seconds < 30


@pytest.mark.docker
def test_rich_markup_in_a_build_log_is_printed_as_text(tmp_path, base_image):
    bench = tmp_path / "bench"
    task = write_task(bench, "2-Broken")
    (task / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo '[/x] [bold]boom' && exit 3\n")
    out = subprocess.run([str(Path(sys.executable).with_name("lmrbench")), "validate", str(bench), "--sandbox",
                          "docker", "--repeat", "1", "--max-mutants", "0"], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 3 and "Traceback" not in out.stderr and "MarkupError" not in out.stderr  # not run
    assert "[/x]" in out.stdout and "[bold]boom" in out.stdout, out.stdout
