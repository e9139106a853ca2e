"""Every attack on the grading that once passed, on three tasks, in Docker: none passes now.

The tasks: the small calc task (hand-written pytest tests), the bundled DPO example (recorded cases whose
checker compares arrays) and a calc task with an official script-style test (legacy mode). Each run is split:
the candidate's body runs in a worker process that holds only its repository and the call's arguments.
After each attack the task folder is unchanged and no container is left. Runs start both sides as fresh
interpreters, or (on the DPO and legacy tasks) fork them from a boot that imported numpy first (the zygote), which
covers both commands a zygote forks: ``python -m pytest`` and the legacy driver's ``python -c``; each attack runs
on two of these (task, boot) pairs (``PAIRS``). The calc task's zygote would add nothing: its image has no
numpy, so the boot preloads nothing and forks the same ``python -m pytest`` as DPO's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hostile_bodies import ATTACKS, attack_body

from helpers.small_task import tree_hash, write_task
from helpers.tasks import copy_example, tagged
from lmrbench.core.source.splice import splice_bodies
from lmrbench.core.taskset import Task, load_task
from lmrbench.harness import spec
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Golden
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestReport, TestStatus

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("hostile_split")]  # its goldens run once, on one worker

TASKS = {"calc": 1, "dpo": 1, "legacy": 3}
"""Task name -> the implementation attacked."""


@pytest.fixture(scope="module")
def sandbox(base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    return Sandbox(DockerRunner(base_image=base_image), warm=False)  # every run cold: none left behind


@pytest.fixture(scope="module")
def tasks(tmp_path_factory, base_image) -> dict[str, Task]:
    root = tmp_path_factory.mktemp("hostile-split")
    dpo = copy_example("1-DPO", root / "dpo-bench")
    return {
        "calc": load_task(write_task(root / "calc-bench", "1-Calc")),
        "dpo": load_task(dpo),
        "legacy": load_task(write_task(root / "legacy-bench", "1-Legacy", legacy=True)),
    }


@pytest.fixture(scope="module")
def goldens(sandbox, tasks) -> dict[str, TestReport]:
    out = {}
    for name, task in tasks.items():
        report = evaluate_variant(sandbox, task, task.info.implementation(TASKS[name]), Golden(), timeout=120)
        assert report.status is TestStatus.PASSED, (name, report.detail, report.log_tail)
        assert report.isolation == "split"
        out[name] = report
    return out


@pytest.fixture(params=["exec", "zygote"])
def boot(request, monkeypatch) -> str:
    """How the boot starts the two sides of every split run of the test."""
    names = ["numpy"] if request.param == "zygote" else []
    monkeypatch.setattr(spec, "framework_modules", lambda task, impl: list(names))
    return str(request.param)


def hostile_candidate(task: Task, impl_index: int, attack: str, dest: Path) -> Path:
    """A repo-shaped candidate whose goal function's body is the attack."""
    impl = task.info.implementation(impl_index)
    goal, qual = impl.goal_files[0], impl.qualnames[0]
    golden = task.golden_path(impl).read_text()
    name = qual.split(".")[-1]
    donor = f"def {name}(*args, **kwargs):\n{attack_body(attack)}"
    source = splice_bodies(golden, donor, [qual], file=goal)
    (dest / goal).parent.mkdir(parents=True, exist_ok=True)
    (dest / goal).write_text(source)
    return dest


def our_containers(engine) -> list[str]:
    from helpers.docker_engine import owned_containers

    return [c.id[:12] for c in owned_containers(engine)]


BOOTS = [(name, "exec") for name in sorted(TASKS)] + [("dpo", "zygote"), ("legacy", "zygote")]
"""The (task, boot) pairs."""

PAIRS = [(attack, *BOOTS[3]) for attack in sorted(ATTACKS)] + [
    (attack, *[b for b in BOOTS if b != BOOTS[3]][k % 4]) for k, attack in enumerate(sorted(ATTACKS))]
"""Each attack on the DPO task forked from the zygote (recorded cases, the boot that preloads numpy: the most
that can be reached), and on one more pair in turn, so that every pair meets three or four attacks: 28 runs
instead of the 70 of every attack on every pair, which ``benchmarks/red_team.py`` runs (and on the local runner)."""


@pytest.mark.parametrize(("attack", "task_name", "boot"), PAIRS, indirect=["boot"])
def test_attack_does_not_pass(attack, task_name, boot, sandbox, tasks, goldens, docker_engine, tmp_path):
    task = tasks[task_name]
    before = tree_hash(task.path)
    cand = hostile_candidate(task, TASKS[task_name], attack, tmp_path / "cand")
    expected = [c.test_id for c in goldens[task_name].cases]
    report = evaluate_variant(sandbox, task, task.info.implementation(TASKS[task_name]), tagged(cand),
                              timeout=60, expected_ids=expected)
    assert report.status is not TestStatus.PASSED, (report.detail, report.log_tail[-1500:])
    assert report.status in (TestStatus.FAILED, TestStatus.ERROR, TestStatus.TIMEOUT), report.detail
    assert report.isolation == "split"
    assert tree_hash(task.path) == before
    assert our_containers(docker_engine) == []


def test_the_worker_never_sees_tests_or_data(boot, sandbox, tasks, goldens, tmp_path):
    """A candidate that lists what it can see: the tests and recorded data are not there, and the trusted
    side's folder cannot be opened."""
    task = tasks["dpo"]
    probe = """
        import os
        seen = []
        for root, dirs, files in os.walk("/work"):
            seen += [os.path.join(root, f) for f in files]
        try:
            os.listdir("/work/trusted")
            trusted = "readable"
        except OSError as exc:
            trusted = type(exc).__name__
        raise RuntimeError("SEEN %d files, data %d, tests %d, trusted %s" % (
            len(seen), sum(p.endswith(".npz") for p in seen), sum("unit_test" in p for p in seen), trusted))
    """
    from hostile_bodies import ATTACKS as table

    table["_probe"] = probe
    try:
        cand = hostile_candidate(task, 1, "_probe", tmp_path / "cand")
    finally:
        table.pop("_probe")
    report = evaluate_variant(sandbox, task, task.info.implementation(1), tagged(cand), timeout=60)
    assert report.status is TestStatus.FAILED
    seen = next(c.message for c in report.cases if "SEEN" in c.message)
    assert "data 0, tests 0, trusted PermissionError" in seen, seen


@pytest.mark.parametrize("attack", ["swaps_the_test_modules_globals", "registers_a_pytest_plugin"])
def test_the_attacks_are_real_where_the_process_is_shared(attack, sandbox, tasks, tmp_path):
    """The same bodies do pass when a task asks for a shared process: the suite attacks for real, and that
    mode is reported as weaker evidence."""
    import json

    task_dir = tmp_path / "1-DPO"
    shutil.copytree(tasks["dpo"].path, task_dir)
    info = json.loads((task_dir / "info.json").read_text())
    info["implementations"][0]["isolation"] = "shared"
    (task_dir / "info.json").write_text(json.dumps(info))
    task = load_task(task_dir)
    cand = hostile_candidate(task, 1, attack, tmp_path / "cand")
    report = evaluate_variant(sandbox, task, task.info.implementation(1), tagged(cand), timeout=60)
    assert report.status is TestStatus.PASSED
    assert report.isolation == "shared" and report.weaker
    assert "weaker evidence" in report.detail
