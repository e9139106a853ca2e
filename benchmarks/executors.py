"""What the executors buy on the example tasks, measured in one run with warm images (Docker).

Prints the wall time of ``lmrbench validate --force`` on a copy of the example tasks with
  - the local executor, --jobs 1 and --jobs 2 (target: jobs 2 at least 1.7x faster on 2 cores);
  - the Ray executor on a two-node cluster of this machine (one CPU per node: 2 slots), over local --jobs 2.
Every command is the installed console script, as a user runs it; each is run ``--rounds`` times and the
median is used. The cluster is started with the ``ray`` command (or give ``--address`` of a running one).
Usage: python benchmarks/executors.py [--rounds R] [--repeat K] [--max-mutants N] [--address HOST:PORT]
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-mutants", type=int, default=12)
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
    for kind, values in times.items():
        print(f"{kind:24s} median {med[kind]:6.1f} s   ({', '.join(f'{v:.1f}' for v in values)})")
    print(f"--jobs 2 speed-up over --jobs 1: {med['local --jobs 1'] / med['local --jobs 2']:.2f}x "
          f"(target >= 1.7 on {os.cpu_count()} cores)")
    print(f"ray / local --jobs 2 (same 2 slots): {med['ray, 2 nodes x 1 CPU'] / med['local --jobs 2']:.3f}")


if __name__ == "__main__":
    main()
