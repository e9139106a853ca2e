"""`--executor ray` on a real two-node Ray cluster of this machine, with real Docker: the same results as the
local executor after the driver is killed and resumed, and a worker process killed mid-run retried."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.llm_server import LLMServer
from helpers.ray_cluster import LocalCluster
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.scoreboard import build_report
from lmrbench.benchmark.sandbox.environments.containers import OWNER_LABEL, RUN_LABEL
from lmrbench.schemas.validation import ImplValidation

pytestmark = [pytest.mark.docker, pytest.mark.long, pytest.mark.xdist_group("ray")]
LMRBENCH = str(Path(sys.executable).with_name("lmrbench"))
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"
QUICK = ["--repeat", "1", "--max-mutants", "1"]


@pytest.fixture(scope="module")
def cluster(base_image) -> Iterator[LocalCluster]:
    c = LocalCluster(cpus=(1, 1))
    yield c
    c.stop()


def lmrbench(*args: object, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([LMRBENCH, *map(str, args)], capture_output=True, text=True, timeout=900)
    if check:
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def examples(tmp_path: Path, only: str | None = None) -> Path:
    """A copy of the bundled example tasks (``only``: of that one task)."""
    bench = tmp_path / "tasks"
    shutil.copytree(EXAMPLES, bench, ignore=shutil.ignore_patterns(".lmrbench"))
    if only is not None:
        for task in [p for p in bench.iterdir() if p.is_dir() and p.name != only]:
            shutil.rmtree(task)
    return bench


def results(run_dir: Path) -> dict[tuple[str, int], ImplValidation]:
    out = {}
    for path in sorted(run_dir.glob("*/impl-*.json")):
        res = ImplValidation.model_validate_json(path.read_bytes())
        out[(res.task, res.impl)] = res
    return out


def decided(res: ImplValidation) -> tuple:
    """What a validation decided, without times and machine names."""
    return (res.valid, res.weak, res.golden_passes, res.masked_failed, res.mutants_killed, res.mutants_total,
            [(m.name, m.killed) for m in res.mutants], res.reasons)


def test_validate_and_evaluate_on_the_cluster_match_the_local_executor_after_the_driver_is_killed(
        cluster, docker_engine, tmp_path) -> None:
    """The cluster's validation, its driver killed mid-run and then resumed, decides as the local executor does,
    losing and duplicating nothing; its evaluate passes the golden bodies and fails the wrong one."""
    bench = examples(tmp_path)
    lmrbench("validate", bench, *QUICK, "--out", tmp_path / "local")
    run_dir = tmp_path / "ray"
    driver = start_validate_on(cluster, bench, run_dir)
    seen: set[int] = set()
    deadline = time.monotonic() + 600
    while not list(run_dir.glob("*/impl-*.json")):
        assert driver.poll() is None, driver.stderr.read() if driver.stderr else ""
        assert time.monotonic() < deadline, "no result within 10 minutes"
        seen |= set(cluster.pids())
        time.sleep(0.2)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    first = {k: decided(r) for k, r in results(run_dir).items()}
    assert 1 <= len(first) < 3, "the driver was to be killed mid-run"

    out = lmrbench("validate", bench, *QUICK, "--out", run_dir, "--executor", "ray",
                   "--address", cluster.address).stdout
    summary = json.loads((run_dir / "summary.json").read_text())
    assert [r["skipped"] for r in summary["rows"]].count(True) == len(first)
    local, ray = results(tmp_path / "local"), results(run_dir)
    assert len(local) == 3 and all(r.valid for r in local.values())
    assert all(len(r.golden_runs) == 1 and len(r.mutants) == 1 for r in ray.values()), out
    assert {k: decided(r) for k, r in ray.items()} == {k: decided(r) for k, r in local.items()}
    assert {k: decided(ray[k]) for k in first} == first
    assert "golden pass rate: 3/3 that ran (100.0%); 0 not run" in out
    seen |= set(cluster.pids())
    assert not [p for p in run_dir.rglob("*") if p.name.endswith(".tmp")]
    assert ray_containers(docker_engine, seen) == []

    # candidates: the golden code for two tasks, a wrong body for the third
    srv = LLMServer()
    try:
        from lmrbench.core.source.splice import extract_function
        from lmrbench.core.taskset import load_taskset

        tasks, _ = load_taskset(bench)
        for n, task in enumerate(tasks):
            impl = task.info.implementations[0]
            name = impl.goal_functions[0]
            body = (extract_function(task.golden_path(impl).read_text(), name) if n < 2
                    else f"def {name}(*args, **kwargs):\n    return None\n")
            srv.on(f"Functions to implement, in {impl.goal_file}: {name}", f"```python\n{body}\n```")
        lmrbench("generate", bench, "--out", tmp_path / "run", "--model", "m", "--base-url", srv.base_url,
                 "--retries", "0", "--no-cache")
    finally:
        srv.close()
    # the local executor's evaluate of these candidates is tested on its own (tests/benchmark/test_evaluate.py):
    # here, what the cluster gives them, against what each candidate is (every test of a golden body passes)
    lmrbench("evaluate", bench, tmp_path / "run", "--timeout", "300", "--executor", "ray",
             "--address", cluster.address)
    outcome = {r.task: (r.status.value, r.passed_tests, r.total_tests) for r in RunDir(tmp_path / "run").results()}
    wrong = tasks[2].name
    assert {t: o for t, o in outcome.items() if t != wrong} == {
        t.name: ("passed", n, n) for t in tasks[:2] for n in [outcome[t.name][2]]}
    assert outcome[wrong][0] == "failed" and all(o[2] > 0 for o in outcome.values()), outcome
    row = build_report([tmp_path / "run"]).rows[0]
    assert (row.passed, row.accuracy, row.infra_errors) == (2, pytest.approx(200 / 3), 0)
    manifest = RunDir(tmp_path / "run").require_manifest()
    assert manifest.sandbox == "docker" and all(t.image_digest.startswith("sha256:") for t in manifest.tasks)


def ray_containers(engine, owners: set[int]) -> list:
    """Run containers started by the given processes."""
    out = []
    for c in engine.containers.list(all=True, filters={"label": RUN_LABEL}, sparse=True):
        pid = str((c.attrs.get("Labels") or {}).get(OWNER_LABEL, "")).rpartition(":")[2]
        if pid.isdigit() and int(pid) in owners:
            out.append(c)
    return out


def start_validate_on(cluster: LocalCluster, bench: Path, run_dir: Path) -> subprocess.Popen[str]:
    """`lmrbench validate` of ``bench`` into ``run_dir`` on the cluster, started."""
    argv = [LMRBENCH, "validate", str(bench), *QUICK, "--out", str(run_dir), "--executor", "ray",
            "--address", cluster.address]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_worker_process_killed_mid_run_is_retried_and_counted_once(cluster, docker_engine, tmp_path):
    # one task: its units (golden, masked, a mutant) are enough to kill a worker mid-run and see the retry
    bench, run_dir = examples(tmp_path, "1-DPO"), tmp_path / "ray"
    driver = start_validate_on(cluster, bench, run_dir)
    killed = None
    seen: set[int] = set()
    deadline = time.monotonic() + 600
    while killed is None and driver.poll() is None:
        assert time.monotonic() < deadline, "no run container within 10 minutes"
        seen |= set(cluster.pids())
        running = [c for c in ray_containers(docker_engine, seen) if c.attrs.get("State") == "running"]
        if running:
            pid = int(str(running[0].attrs["Labels"][OWNER_LABEL]).rpartition(":")[2])
            os.kill(pid, signal.SIGKILL)
            killed = pid
        time.sleep(0.1)
    out, err = driver.communicate(timeout=900)
    assert killed is not None, "the run ended before a worker could be killed"
    assert driver.returncode == 0, out[-3000:] + err[-3000:]
    final = results(run_dir)
    assert list(final) == [("1-DPO", 1)]
    for res in final.values():
        assert res.valid and res.golden_passes == 1 and res.masked_failed, res.reasons
        assert len(res.mutants) == 1 and all(m.status.value != "infra_error" for m in res.mutants)
    seen |= set(cluster.pids())
    deadline = time.monotonic() + 60
    while ray_containers(docker_engine, seen | {killed}) and time.monotonic() < deadline:
        time.sleep(1)  # the killed worker's container goes with the node's next unit, or its own end
    assert ray_containers(docker_engine, seen | {killed}) == []


def test_ray_asked_for_without_ray_installed_is_a_one_line_error(tmp_path) -> None:
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "shadow")}
    proc = subprocess.run([LMRBENCH, "validate", str(EXAMPLES), "--executor", "ray"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "error: --executor ray needs Ray on this machine: pip install 'lmrbench[ray]'"
    ]


def test_an_address_where_no_cluster_answers_is_a_one_line_error_at_once(tmp_path) -> None:
    from helpers.ray_cluster import free_port

    address = f"127.0.0.1:{free_port()}"
    bench = examples(tmp_path)
    proc = lmrbench("validate", bench, "--executor", "ray", "--address", address, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [f"error: no Ray cluster answers at {address}: Connection refused"]
    assert not (bench / ".lmrbench").exists()
