"""Which frameworks a split run's boot imports before it forks both sides (``harness.split.framework_modules``)."""

from __future__ import annotations

import marshal

from helpers.small_task import write_task
from lmrbench.core.sandbox import Worker
from lmrbench.core.taskset import load_task
from lmrbench.harness import payload
from lmrbench.harness.split import framework_modules, make_worker

TESTS = {
    "unit_test/unit_test_1.py": "import torch\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "unit_test/unit_test_2.py": "from calc import scale\n\n\ndef test_scale():\n    import scipy.special\n"
                                "    import transformers\n    assert scale([1], 2) == [2]\n",
}


def test_the_heavy_modules_the_goal_file_and_the_tests_import(tmp_path):
    task = load_task(write_task(tmp_path / "bench", tests=TESTS))
    goal = task.repo_dir / "calc.py"
    goal.write_text("import numpy as np\nimport json\n" + goal.read_text())
    (task.repo_dir / "transformers").mkdir()  # the repository's own package shadows the installed one
    assert framework_modules(task, task.info.implementation(1)) == ["numpy", "torch"]
    assert framework_modules(task, task.info.implementation(2)) == ["numpy", "scipy"]


def test_a_task_without_frameworks_starts_its_sides_afresh(tmp_path):
    task = load_task(write_task(tmp_path / "bench"))
    assert framework_modules(task, task.info.implementation(1)) == []


def _boot(worker: Worker | None) -> tuple[list[str], dict]:
    """The interpreter flags of the boot command and its spec."""
    argv = payload.boot_argv("/work", ["python", "-m", "pytest"], worker, timeout=10, env={}, ids=None)
    return argv[1:argv.index("-c")], marshal.loads(bytes.fromhex(argv[-1]))


def test_the_boot_runs_site_only_when_it_preloads(tmp_path):
    plain = make_worker(tmp_path, ["calc"])
    zygote = make_worker(tmp_path, ["calc"], ["torch"])
    for worker in (plain, None):
        flags, spec = _boot(worker)
        assert flags == ["-I", "-S"] and "preload" not in spec
    flags, spec = _boot(zygote)
    assert flags == ["-I"] and spec["preload"] == ["torch"]
