"""What task environments cost, measured in one run on a small numpy task written here.

Prints: base image bootstrap (a reuse, or a fresh build with --fresh into a throwaway tag), the wheelhouse
download, a task image build without layer cache, a cached re-prepare, and one containerized pytest run over
the same pytest command run directly with ``docker run`` on the same image (the runner's overhead ratio).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from lmrbench.authoring.dockerfile import write_dockerfile
from lmrbench.benchmark.sandbox.docker import DockerRunner
from lmrbench.benchmark.sandbox.images import BASE_IMAGE_TAG, BASE_TARGET, bootstrap_base_image
from lmrbench.benchmark.sandbox.wheelhouse import build_wheelhouse
from lmrbench.core.taskset import load_task
from lmrbench.harness.pytest_run import run_pytest

TEST = """import numpy as np
from vec import dot


def test_dot():
    assert dot(np.arange(3), np.arange(3)) == 5
"""


def _task(root: Path):
    task = root / "9-Bench"
    (task / "repo" / "unit_test").mkdir(parents=True)
    (task / "repo" / "vec.py").write_text("def dot(a, b):\n    return float((a * b).sum())\n")
    (task / "repo" / "unit_test" / "test_vec.py").write_text(TEST)
    (task / "repo" / "requirements.txt").write_text("numpy\n")
    info = {"instance_id": 9, "repo_folder_name": "repo", "implementations": [
        {"index": 1, "goal_file": "vec.py", "goal_function": "dot", "unit_test_file": "unit_test/test_vec.py"}]}
    (task / "info.json").write_text(json.dumps(info))
    write_dockerfile(task, "repo")
    return load_task(task)


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fresh", action="store_true", help="also bootstrap a throwaway base image")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    res, secs = _timed(bootstrap_base_image)
    print(f"base image {BASE_IMAGE_TAG}: {'built' if res.created else 'reused'} in {secs:.2f} s")
    if args.fresh:
        tag = "lmrbench-base:measure"
        res, secs = _timed(lambda: bootstrap_base_image(tag, force=True))
        print(f"fresh bootstrap ({res.tool}): {secs:.1f} s")
        subprocess.run(["docker", "rmi", tag], capture_output=True)

    with tempfile.TemporaryDirectory() as tmp:
        _, secs = _timed(lambda: build_wheelhouse(["numpy"], BASE_TARGET, refresh=True))
        print(f"wheelhouse numpy+pytest (download): {secs:.1f} s")
        task = _task(Path(tmp))
        runner = DockerRunner(base_image=BASE_IMAGE_TAG)
        tag, secs = _timed(lambda: runner.prepare(task, rebuild=True))
        print(f"task image with numpy, built without layer cache: {secs:.1f} s")
        _, secs = _timed(lambda: runner.prepare(task))
        print(f"cached re-prepare: {secs * 1000:.0f} ms")

        ours = []
        for _ in range(args.runs):
            report, secs = _timed(lambda: run_pytest(runner, task, task.repo_dir, ["unit_test/test_vec.py"],
                                                     timeout=120))
            assert report.passed, report.detail
            ours.append(secs)
        direct = []
        for _ in range(args.runs):
            cmd = ["docker", "run", "--rm", "--network", "none", "-v", f"{task.repo_dir}:/w:ro", "-w", "/w", tag,
                   "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "unit_test/test_vec.py"]
            proc, secs = _timed(lambda cmd=cmd: subprocess.run(cmd, capture_output=True))
            assert proc.returncode == 0, proc.stdout
            direct.append(secs)
        a, b = statistics.median(ours), statistics.median(direct)
        print(f"containerized pytest run (median of {args.runs}): {a:.2f} s; plain docker run: {b:.2f} s; "
              f"ratio {a / b:.2f}")
        subprocess.run(["docker", "rmi", tag], capture_output=True)


if __name__ == "__main__":
    main()
