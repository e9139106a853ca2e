"""How well recorded tests tell right from wrong on tasks they were not tuned on: four numpy tasks
(``wrong_answer_tasks.py``: a label-smoothed NLL with ``ignore_index`` and a reduction mode, top-k/top-p/
temperature filtering, rotary embeddings, a beam scorer's length penalty read from ``self``), each authored as
``lmrbench task new`` does and recorded with ``task record`` from its own driver, which uses the default
hyperparameters. Every plausible wrong answer and every correct answer in another style is then graded as
``lmrbench evaluate`` grades a candidate (local sandbox). Prints, per task and in all, the wrong answers
rejected and the correct ones passed, and names each wrong answer that passed.

    python benchmarks/wrong_answers.py [--no-probe] [--only NAME] [--summary]

``--no-probe`` records by coverage alone (``record_tests(probe=False)``), for comparison.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from wrong_answer_tasks import TASKS  # noqa: E402

from lmrbench.authoring.record.record import record_tests  # noqa: E402
from lmrbench.authoring.task.task_new import create_task  # noqa: E402
from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec  # noqa: E402
from lmrbench.benchmark.sandbox.running.local import LocalRunner  # noqa: E402
from lmrbench.core.taskset import Task  # noqa: E402
from lmrbench.harness.sandbox import Sandbox  # noqa: E402
from lmrbench.harness.spec import Candidate  # noqa: E402
from lmrbench.harness.variant import evaluate_variant  # noqa: E402
from lmrbench.schemas.testrun import TestStatus  # noqa: E402


def author(spec: dict[str, object], root: Path) -> Task:
    """The task of one corpus entry, made as ``lmrbench task new`` makes it."""
    source = root / "src"
    files = dict(spec["files"])  # type: ignore[call-overload]
    files["requirements.txt"] = "numpy\n"
    for rel, text in files.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(textwrap.dedent(text) if rel.endswith(".txt") else text)
    task_spec = TaskSpec(source=str(source), functions=[FunctionRef.parse(str(spec["function"]))],
                         instructions=["Implement it as its docstring says."], bench=root / "bench",
                         category="Training Objectives & Optimization", name=str(spec["name"]))
    return create_task(task_spec)


def grade(box: LocalRunner, task: Task, goal: str, source: str, folder: Path) -> TestStatus:
    """The status of one candidate goal file, graded as ``evaluate`` grades it."""
    (folder / goal).parent.mkdir(parents=True, exist_ok=True)
    (folder / goal).write_text(source)
    return evaluate_variant(box, task, task.info.implementation(1), Candidate(folder=folder), timeout=300).status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-probe", action="store_true", help="record by coverage alone (the old selection)")
    parser.add_argument("--only", help="one task by name")
    parser.add_argument("--summary", action="store_true", help="print each recording's summary")
    args = parser.parse_args()
    box = Sandbox(LocalRunner())
    totals = [0, 0, 0, 0]
    with tempfile.TemporaryDirectory(prefix="lmrbench-wrong-") as tmp:
        for spec in TASKS:
            if args.only and spec["name"] != args.only:
                continue
            root = Path(tmp) / str(spec["name"])
            task = author(spec, root)
            start = time.perf_counter()
            result = record_tests(task, 1, str(spec["command"]), sandbox=box, probe=not args.no_probe)
            took = time.perf_counter() - start
            if args.summary:
                print("\n".join(f"  {line}" for line in result.summary))
            goal = str(spec["function"]).partition("::")[0]
            counts = {"wrong": [0, 0], "right": [0, 0]}
            passed_wrong: list[str] = []
            failed_right: list[str] = []
            for kind in ("wrong", "right"):
                for k, (what, body) in enumerate(dict(spec[kind]).items()):  # type: ignore[call-overload]
                    status = grade(box, task, goal, str(spec["head"]) + body, root / f"{kind}-{k}")
                    good = status is (TestStatus.FAILED if kind == "wrong" else TestStatus.PASSED)
                    counts[kind][0] += good
                    counts[kind][1] += 1
                    if not good:
                        (passed_wrong if kind == "wrong" else failed_right).append(f"{what} ({status.value})")
            print(f"{spec['name']}: {len(result.cases)} cases recorded in {took:.1f} s; wrong rejected "
                  f"{counts['wrong'][0]}/{counts['wrong'][1]}, correct passed {counts['right'][0]}/"
                  f"{counts['right'][1]}")
            for what in passed_wrong:
                print(f"  wrong answer not rejected: {what}")
            for what in failed_right:
                print(f"  correct answer not passed: {what}")
            totals = [totals[0] + counts["wrong"][0], totals[1] + counts["wrong"][1],
                      totals[2] + counts["right"][0], totals[3] + counts["right"][1]]
    print(f"in all: wrong rejected {totals[0]}/{totals[1]}, correct passed {totals[2]}/{totals[3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
