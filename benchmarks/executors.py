"""What the executors buy on the example tasks, measured in one run with warm images (Docker).

Prints the wall time of ``lmrbench validate --force`` on a copy of the example tasks with
  - the local executor, --jobs 1 and --jobs 2 (target: jobs 2 at least 1.7x faster on 2 cores);
  - the Ray executor on a two-node cluster of this machine (one CPU per node: 2 slots), over local --jobs 2.
Every command is the installed console script, as a user runs it; each is run ``--rounds`` times and the
median is used. The cluster is started with the ``ray`` command (or give ``--address`` of a running one).

``--work S`` replaces the examples by three tasks whose every test run first spends about S seconds of one core
(as a run of a torch-sized task spends them importing and setting up): there the fixed cost of a container
start is small beside the run, as in the task sets the executors are for.
Usage: python benchmarks/executors.py [--rounds R] [--repeat K] [--max-mutants N] [--work S] [--address HOST:PORT]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LMRBENCH = str(Path(sys.executable).with_name("lmrbench"))
sys.path.insert(0, str(ROOT / "tests"))


def timed(argv: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return seconds


HEAVY_GOAL = '''"""Window means."""


def smooth(xs, k):
    """Means of the k-wide windows of xs."""
    out = []
    for i in range(len(xs) - k + 1):
        out.append(sum(xs[i:i + k]) / k)
    return out
'''

HEAVY_TEST = '''from smooth import smooth


def set_up():
    """The run's fixed cost before any test (a model's import and set-up), in plain CPU."""
    total = 0
    for i in range({loops}):
        total += i * i % 7
    return total


SET_UP = set_up()


def test_smooth():
    assert smooth([1.0, 2.0, 3.0], 2) == [1.5, 2.5]


def test_smooth_single():
    assert smooth([4.0, 6.0], 1) == [4.0, 6.0]
'''


def loops_for(seconds: float) -> int:
    """Iterations of HEAVY_TEST's set-up loop that take about ``seconds`` on one core of this machine."""
    n = 2_000_000
    t0 = time.perf_counter()
    total = 0
    for i in range(n):
        total += i * i % 7
    return int(n * seconds / (time.perf_counter() - t0))


def write_heavy_taskset(bench: Path, seconds: float, count: int = 3) -> Path:
    """``count`` tasks in ``bench`` whose every test run spends about ``seconds`` of CPU; returns ``bench``."""
    from helpers.tasks import Impl, write_task
    from lmrbench.authoring.task.mask import mask_source

    masked = mask_source(HEAVY_GOAL, ["smooth"], file="smooth.py")
    test = HEAVY_TEST.format(loops=loops_for(seconds))
    for k in range(1, count + 1):
        write_task(bench, f"{k}-Heavy", repo="heavyrepo", goal_file="smooth.py", goal=masked, golden=HEAVY_GOAL,
                   impls=[Impl("smooth", "unit_test/test_smooth.py", "Window means.")],
                   files={"unit_test/test_smooth.py": test}, info={"paper_name": f"Heavy {k}"}, dockerfile=True)
    return bench


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-mutants", type=int, default=12)
    ap.add_argument("--work", type=float, default=0.0,
                    help="seconds of CPU each test run spends first, on three generated tasks (default: examples)")
    ap.add_argument("--address", help="a running Ray cluster (default: start a two-node one here)")
    args = ap.parse_args()
    cluster = None
    if not args.address:
        from helpers.ray_cluster import LocalCluster

        cluster = LocalCluster(cpus=(1, 1))
    address = args.address or cluster.address  # type: ignore[union-attr]
    try:
        with tempfile.TemporaryDirectory(prefix="lmrbench-exec-") as tmp:
            bench = Path(tmp) / "tasks"
            if args.work:
                write_heavy_taskset(bench, args.work)
            else:
                shutil.copytree(ROOT / "examples" / "tasks", bench, ignore=shutil.ignore_patterns(".lmrbench"))
            base = [LMRBENCH, "validate", str(bench), "--force", "--repeat", str(args.repeat),
                    "--max-mutants", str(args.max_mutants), "--run-dir", str(Path(tmp) / "run")]
            timed(base)  # warm: images built, wheelhouse present
            timed([*base, "--executor", "ray", "--address", address])  # warm: each node's image and archive
            kinds = {
                "local --jobs 1": base + ["--jobs", "1"],
                "local --jobs 2": base + ["--jobs", "2"],
                "ray, 2 nodes x 1 CPU": base + ["--executor", "ray", "--address", address],
            }
            times: dict[str, list[float]] = {k: [] for k in kinds}
            for _ in range(args.rounds):  # interleaved, so that a busy moment hits every kind alike
                for kind, argv in kinds.items():
                    times[kind].append(timed(argv))
    finally:
        if cluster is not None:
            cluster.stop()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"task set: {'three tasks, ' + str(args.work) + ' s of CPU per test run' if args.work else 'examples'}")
    for kind, values in times.items():
        print(f"{kind:24s} median {med[kind]:6.1f} s   ({', '.join(f'{v:.1f}' for v in values)})")
    print(f"--jobs 2 speed-up over --jobs 1: {med['local --jobs 1'] / med['local --jobs 2']:.2f}x "
          f"(target >= 1.7 on {os.cpu_count()} cores)")
    print(f"ray / local --jobs 2 (same 2 slots): {med['ray, 2 nodes x 1 CPU'] / med['local --jobs 2']:.3f}")


if __name__ == "__main__":
    main()
