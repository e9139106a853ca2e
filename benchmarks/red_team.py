"""The red team's corpora of attacks on the grading, through the harness on each sandbox: false passes and fails.

``--corpus tests`` (the default): every hostile goal-function body of the tests' own corpus
(``tests/docker/hostile_bodies.py``: a forged report, an exit, a frame walk, a registered plugin, forged frames on
the call pipes...) spliced into the golden goal file; the right answer is the golden code handed in as a
candidate. ``--corpus heldout``: the held-out corpus (``benchmarks/heldout_attacks.py``, never used to tune the
harness): whole goal files whose module-level code, decorators, threads and bodies attack the grading, and right
answers in unusual styles. Each is graded on three tasks (the small calc task, the bundled DPO example with
recorded cases, a calc task with an official script-style test) as ``evaluate`` grades a candidate. Prints, per
sandbox, the attacks run and how they ended, the false passes (an attack passed) and the false fails (a right
answer did not pass), with the seconds it took, then how each entry ended on each task.

    python benchmarks/red_team.py [--sandbox docker|local|both] [--corpus tests|heldout] [--only NAME,...] [--why]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "docker"), str(ROOT / "benchmarks")]

import heldout_attacks as heldout  # noqa: E402
from hostile_bodies import ATTACKS, attack_body  # noqa: E402

from helpers.small_task import write_task  # noqa: E402
from helpers.tasks import as_candidate, copy_example  # noqa: E402
from lmrbench.core.source.splice import extract_function, splice_bodies  # noqa: E402
from lmrbench.core.taskset import Task, load_task  # noqa: E402
from lmrbench.harness.evidence import Evidence  # noqa: E402
from lmrbench.harness.sandbox import Sandbox  # noqa: E402
from lmrbench.harness.spec import Candidate, Golden  # noqa: E402
from lmrbench.harness.variant import evaluate_variant  # noqa: E402
from lmrbench.schemas.testrun import TestReport, TestStatus  # noqa: E402


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


def attack_files(task: Task, index: int, attack: str) -> Candidate:
    """The golden goal file with the goal function's body replaced by the tests' attack."""
    impl = task.info.implementation(index)
    goal, qual = impl.goal_files[0], impl.qualnames[0]
    donor = f"def {qual.split('.')[-1]}(*args, **kwargs):\n{attack_body(attack)}"
    return Candidate(files={goal: splice_bodies(task.golden_path(impl).read_text(), donor, [qual], file=goal)})


def heldout_files(task: Task, index: int, name: str) -> Candidate:
    """The goal file of a held-out attack or style (``heldout_attacks``), written from the task's masked and
    golden goal files."""
    impl = task.info.implementation(index)
    goal, qual = impl.goal_files[0], impl.qualnames[0]
    masked, golden = (task.repo_dir / goal).read_text(), task.golden_path(impl).read_text()
    function, short = extract_function(golden, qual, file=goal), qual.split(".")[-1]
    if name in heldout.ATTACKS:
        return Candidate(files={goal: heldout.attack_file(masked, function, short, heldout.ATTACKS[name])})
    return Candidate(files={goal: heldout.STYLES[name](masked, golden, function, short)})


@dataclass(frozen=True)
class Entry:
    """One goal file of a corpus: how it is made for a task's implementation, and whether it is a right answer
    (it must pass) or an attack (it must not)."""

    name: str
    make: Callable[[Task, int], Candidate]
    right: bool


def corpus(which: str, only: list[str] | None = None) -> list[Entry]:
    """The entries of the tests' corpus or the held-out one (``only``: those named)."""
    if which == "tests":
        entries = [Entry("golden_as_a_candidate", as_candidate, True),
                   *(Entry(a, partial(attack_files, attack=a), False) for a in sorted(ATTACKS))]
    else:
        entries = [*(Entry(s, partial(heldout_files, name=s), True) for s in heldout.STYLES),
                   *(Entry(a, partial(heldout_files, name=a), False) for a in heldout.ATTACKS)]
    return [e for e in entries if not only or e.name in only]


def explain(report: TestReport, evidence: Evidence) -> str:
    """Why a run ended as it did, in a line: what the attack noted it achieved (its ``heldout:`` lines on the
    worker's stderr), then the first case that did not pass, or the report's detail."""
    notes = [line.strip() for r in evidence.runs for line in (r.worker_output + "\n" + r.output).splitlines()
             if line.startswith("heldout:")]
    failed = next((c for c in report.cases if c.outcome != "passed"), None)
    why = f"{failed.test_id}: {failed.message}" if failed else report.detail
    return " | ".join([*dict.fromkeys(notes)][:3] + [" ".join(why.split())[:200]])


def run(kind: str, which: str = "tests", only: list[str] | None = None, *, why: bool = False) -> None:
    """Grade a corpus (``only``: its entries of those names) on one sandbox and print the figures (``why``:
    and why each run ended as it did)."""
    sandbox, statuses, false_pass, false_fail = make_sandbox(kind), Counter[str](), [], []
    entries, ended, whys = corpus(which, only), dict[str, list[str]](), dict[str, list[str]]()
    t0 = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="lmrbench-red-team-") as tmp:
            for name, (task, index) in tasks(Path(tmp)).items():
                impl = task.info.implementation(index)
                golden = evaluate_variant(sandbox, task, impl, Golden(), timeout=300)
                ids = [c.test_id for c in golden.cases]
                if golden.status is not TestStatus.PASSED:
                    false_fail.append(f"{name}: the golden code {golden.status.value}")
                for entry in entries:
                    evidence = Evidence()
                    report = evaluate_variant(sandbox, task, impl, entry.make(task, index),
                                              timeout=300 if entry.right else 60, expected_ids=ids, evidence=evidence)
                    ended.setdefault(entry.name, []).append(f"{name} {report.status.value}")
                    if why:
                        whys.setdefault(entry.name, []).append(f"{name}: {explain(report, evidence)}")
                    passed = report.status is TestStatus.PASSED
                    if entry.right and not passed:
                        false_fail.append(f"{name}: {entry.name} {report.status.value}: {report.detail[:300]}")
                    elif not entry.right:
                        statuses[report.status.value] += 1
                        false_pass += [f"{name}: {entry.name}"] if passed else []
    finally:
        sandbox.close()
    attacks, rights = sum(not e.right for e in entries), sum(e.right for e in entries)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
    print(f"{kind} ({which} corpus): {sum(statuses.values())} attacks ({attacks} x 3 tasks): {counts}; "
          f"false passes {len(false_pass)}, false fails {len(false_fail)} of {rights * 3} right answers "
          f"({time.monotonic() - t0:.0f} s)")
    for line in false_pass + false_fail:
        print(f"  ! {line}")
    for name, lines in ended.items():
        print(f"  {name}: {', '.join(lines)}")
        for line in whys.get(name, []):
            print(f"      {line}")


def main() -> None:
    """Parse the options and run the corpus on each sandbox asked for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", choices=["docker", "local", "both"], default="both")
    parser.add_argument("--corpus", choices=["tests", "heldout"], default="tests")
    parser.add_argument("--only", default="", help="comma-separated names of the entries to run (default: all)")
    parser.add_argument("--why", action="store_true", help="say why each run ended as it did")
    options = parser.parse_args()
    only = [n for n in options.only.split(",") if n]
    for kind in ["docker", "local"] if options.sandbox == "both" else [options.sandbox]:
        run(kind, options.corpus, only, why=options.why)


if __name__ == "__main__":
    main()
