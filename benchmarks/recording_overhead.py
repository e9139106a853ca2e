"""What recording costs a program, measured in one run on a small numpy training loop written here.

Runs the same script three ways, each several times, and prints the median wall-clock seconds and ratios:
plain; with the recording modules on the path but recording off; recording the goal function (its first calls
encoded, replayed and saved, the later ones passed through by the wrapper).

    python benchmarks/recording_overhead.py [--steps 3000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lmrbench.runtime import RECORD_RUNTIME, runtime_files

LOSSES = """
import numpy as np


def hinge_loss(scores, labels, margin=1.0):
    return float(np.maximum(0.0, margin - labels * scores).mean())
"""

TRAIN = """
import sys

import numpy as np

from losses import hinge_loss

rng = np.random.default_rng(0)
w = np.zeros(8)
for step in range(int(sys.argv[1])):
    x = rng.normal(size=(32, 8))
    y = np.where(rng.normal(size=32) > 0, 1.0, -1.0)
    loss = hinge_loss(x @ w, y)
    w += 0.01 * (x * y[:, None]).mean(axis=0)
"""


def _time(argv: list[str], env: dict[str, str], cwd: Path, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lmrbench-bench-") as tmp:
        root = Path(tmp)
        repo, harness, out = root / "repo", root / "harness", root / "out"
        for folder in (repo, harness, out):
            folder.mkdir()
        (repo / "losses.py").write_text(LOSSES)
        (repo / "train.py").write_text(TRAIN)
        for name, data in runtime_files(RECORD_RUNTIME).items():
            (harness / name).write_bytes(data)
        argv = [sys.executable, "train.py", str(args.steps)]
        plain = {k: v for k, v in os.environ.items() if not k.startswith("LMRBENCH_")}
        off = {**plain, "PYTHONPATH": str(harness)}
        spec = {"targets": [{"file": "losses.py", "qualname": "hinge_loss"}], "max_calls": 12}
        on = {
            **off,
            "LMRBENCH_RECORD_SPEC": json.dumps(spec),
            "LMRBENCH_OUT": str(out),
            "LMRBENCH_RECORD_ROOT": str(repo),
        }
        t_plain = _time(argv, plain, repo, args.repeat)
        t_off = _time(argv, off, repo, args.repeat)
        t_on = _time(argv, on, repo, args.repeat)
    print(f"{args.steps} steps, median of {args.repeat} runs")
    print(f"plain                  {t_plain:8.3f} s")
    print(f"runtime on path, off   {t_off:8.3f} s   x{t_off / t_plain:.2f}")
    print(f"recording 12 calls     {t_on:8.3f} s   x{t_on / t_plain:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
