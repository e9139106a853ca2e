"""The red team's corpus of attacks on the grading, through the harness on each sandbox: false passes and fails.

Every hostile goal-function body (``tests/docker/hostile_bodies.py``: a forged report, an exit, a frame walk, a
registered plugin, forged frames on the call pipes...) is spliced into the goal function of three tasks (the small
calc task, the bundled DPO example with recorded cases, a calc task with an official script-style test) and graded
as ``evaluate`` grades a candidate; the golden code handed in as a candidate is graded too. Prints, per sandbox,
the attacks run and how each ended, the false passes (an attack passed) and the false fails (the golden code run as
a candidate did not pass), with the seconds it took.

    python benchmarks/red_team.py [--sandbox docker|local|both]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "docker")]

from hostile_bodies import ATTACKS, attack_body  # noqa: E402

from helpers.small_task import write_task  # noqa: E402
from helpers.tasks import as_candidate, copy_example  # noqa: E402
from lmrbench.core.source.splice import splice_bodies  # noqa: E402
from lmrbench.core.taskset import Task, load_task  # noqa: E402
from lmrbench.harness.sandbox import Sandbox  # noqa: E402
from lmrbench.harness.spec import Candidate, Golden  # noqa: E402
from lmrbench.harness.variant import evaluate_variant  # noqa: E402
from lmrbench.schemas.testrun import TestStatus  # noqa: E402


def make_sandbox(kind: str) -> Sandbox:
    """A cold sandbox of that kind (every run a fresh process or container)."""
    if kind == "docker":
        from lmrbench.benchmark.sandbox.running.docker import DockerRunner

        return Sandbox(DockerRunner(), warm=False)
    from lmrbench.benchmark.sandbox.running.local import LocalRunner

    return Sandbox(LocalRunner(), warm=False)


def tasks(root: Path) -> dict[str, tuple[Task, int]]:
    """The three tasks, and the implementation attacked in each."""
    return {"calc": (load_task(write_task(root / "calc-bench", "1-Calc")), 1),
            "dpo": (load_task(copy_example("1-DPO", root / "dpo-bench")), 1),
            "legacy": (load_task(write_task(root / "legacy-bench", "1-Legacy", legacy=True)), 3)}


def attack_files(task: Task, index: int, attack: str) -> dict[str, str]:
    """The golden goal file with the goal function's body replaced by the attack."""
    impl = task.info.implementation(index)
    goal, qual = impl.goal_files[0], impl.qualnames[0]
    donor = f"def {qual.split('.')[-1]}(*args, **kwargs):\n{attack_body(attack)}"
    return {goal: splice_bodies(task.golden_path(impl).read_text(), donor, [qual], file=goal)}


def run(kind: str) -> None:
    """Grade the corpus on one sandbox and print the figures."""
    sandbox, statuses, false_pass, false_fail = make_sandbox(kind), Counter[str](), [], []
    t0 = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="lmrbench-red-team-") as tmp:
            for name, (task, index) in tasks(Path(tmp)).items():
                impl = task.info.implementation(index)
                golden = evaluate_variant(sandbox, task, impl, Golden(), timeout=300)
                ids = [c.test_id for c in golden.cases]
                right = evaluate_variant(sandbox, task, impl, as_candidate(task, index), timeout=300, expected_ids=ids)
                if golden.status is not TestStatus.PASSED or right.status is not TestStatus.PASSED:
                    false_fail.append(f"{name}: golden {golden.status.value}, as a candidate {right.status.value}")
                for attack in sorted(ATTACKS):
                    report = evaluate_variant(sandbox, task, impl, Candidate(files=attack_files(task, index, attack)),
                                              timeout=60, expected_ids=ids)
                    statuses[report.status.value] += 1
                    false_pass += [f"{name}: {attack}"] if report.status is TestStatus.PASSED else []
    finally:
        sandbox.close()
    ended = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
    print(f"{kind}: {sum(statuses.values())} attacks ({len(ATTACKS)} bodies x 3 tasks): {ended}; "
          f"false passes {len(false_pass)}, false fails {len(false_fail)} of 3 golden candidates "
          f"({time.monotonic() - t0:.0f} s)")
    for line in false_pass + false_fail:
        print(f"  {line}")


def main() -> None:
    """Parse the options and run the corpus on each sandbox asked for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", choices=["docker", "local", "both"], default="both")
    chosen = parser.parse_args().sandbox
    for kind in ["docker", "local"] if chosen == "both" else [chosen]:
        run(kind)


if __name__ == "__main__":
    main()
