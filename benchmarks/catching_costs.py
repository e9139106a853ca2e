"""What choosing cases by what they catch costs: recording and validation time, new path against the old one,
measured in one run on the bundled DPO example and a label-smoothed cross-entropy written here.

Recording, old path: the command's calls kept by coverage and call shape (``record_tests(probe=False)``).
New path: the same, then the probe run (added cases where a parameter never varied, every mutant of the golden
body on every case) and selection by what the calls catch. Validation, old path: the first eight mutant kinds,
at most 25 generated and ``--max-mutants`` picked evenly; new path: every kind, pins and equivalent mutants from
the recording, sampled by kind, on the new (larger) set of cases. Prints median seconds and ratios.

    python benchmarks/catching_costs.py [--sandbox local|docker] [--repeat 3] [--max-mutants 12]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from helpers.smoothed_ce import make_task as make_ce_task  # noqa: E402
from lmrbench.authoring.mutants.mutants import LEGACY_KINDS, generate_mutants  # noqa: E402
from lmrbench.authoring.record.record import record_tests  # noqa: E402
from lmrbench.benchmark.execution.sandboxes import get_sandbox  # noqa: E402
from lmrbench.benchmark.execution.schedule import run_units  # noqa: E402
from lmrbench.benchmark.execution.threads import ThreadExecutor  # noqa: E402
from lmrbench.benchmark.validation.implementation import ImplCheck  # noqa: E402
from lmrbench.benchmark.validation.plan import PlannedMutant, ValidateOptions  # noqa: E402
from lmrbench.core.taskset import Task, load_task  # noqa: E402
from lmrbench.harness.sandbox import Sandbox  # noqa: E402


def _median(fn: Callable[[], object], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def _old_mutants(task: Task, limit: int) -> list[PlannedMutant]:
    impl = task.info.implementation(1)
    goal, qual = impl.goal_files[0], impl.qualnames[0]
    source = task.golden_path(impl, 0).read_text(encoding="utf-8")
    mutants = [(goal, qual, m) for m in generate_mutants(source, qual, file=goal, limit=25, kinds=LEGACY_KINDS)]
    if len(mutants) <= limit:
        return mutants
    step = len(mutants) / limit
    return [mutants[int(i * step)] for i in range(limit)]


def _validate(sandbox: Sandbox, task: Task, max_mutants: int, old: bool) -> tuple[int, int]:
    opts = ValidateOptions(repeat=1, max_mutants=max_mutants)
    impl = task.info.implementation(1)
    mutants = _old_mutants(task, max_mutants) if old else None
    check = ImplCheck(task, impl, opts, sandbox.name, mutants=mutants)
    executor = ThreadExecutor(sandbox, {str(task.path): task}, jobs=1)
    try:
        run_units(executor, check.first_units(), check.on_result)
    finally:
        executor.close()
    return check.result.mutants_killed, check.result.mutants_total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", choices=["local", "docker"], default="local")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-mutants", type=int, default=12)
    args = parser.parse_args()
    sandbox = get_sandbox(args.sandbox)
    with tempfile.TemporaryDirectory(prefix="lmrbench-catching-") as tmp:
        dpo = Path(tmp) / "bench" / "1-DPO"
        shutil.copytree(HERE.parent / "examples" / "tasks" / "1-DPO", dpo)
        tasks = [(load_task(dpo), "python train.py --steps 1"), (make_ce_task(Path(tmp) / "ce"), "python evaluate.py")]
        print(f"sandbox: {sandbox.name}; median of {args.repeat} runs; --max-mutants {args.max_mutants}")
        for task, command in tasks:
            sandbox.prepare(task)

            def record(probe: bool, task: Task = task, command: str = command) -> None:
                record_tests(task, 1, command, sandbox=sandbox, force=True, probe=probe)

            rec_old = _median(lambda r=record: r(False), args.repeat)
            rec_new = _median(lambda r=record: r(True), args.repeat)
            record(False)
            old_cases = len(list((task.repo_dir / "unit_test" / "data" / "impl_1").glob("case_*.npz")))
            val_old = _median(lambda t=task: _validate(sandbox, t, args.max_mutants, True), args.repeat)
            old_kills = _validate(sandbox, task, args.max_mutants, True)
            record(True)
            new_cases = len(list((task.repo_dir / "unit_test" / "data" / "impl_1").glob("case_*.npz")))
            val_new = _median(lambda t=task: _validate(sandbox, t, args.max_mutants, False), args.repeat)
            new_kills = _validate(sandbox, task, args.max_mutants, False)
            print(f"{task.name}:")
            print(f"  record   old {rec_old:6.2f} s ({old_cases} cases)   new {rec_new:6.2f} s ({new_cases} cases)   "
                  f"ratio {rec_new / rec_old:.2f}")
            print(f"  validate old {val_old:6.2f} s (kills {old_kills[0]}/{old_kills[1]})   new {val_new:6.2f} s "
                  f"(kills {new_kills[0]}/{new_kills[1]})   ratio {val_new / val_old:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
