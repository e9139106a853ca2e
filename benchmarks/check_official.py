"""Time ``lmrbench tasks check`` on a real task set (the official LMR-Bench set as published) and check what it
must report there.

Give it the set's folder (for the official one: the ``benchmark/`` folder of du-nlp-lab/LMR-Bench at commit
2198c422, kept outside this repository). It runs the command three ways in fresh processes (all codes, JSON;
``--select F,T``; ``--select L201``) and prints the wall-clock seconds of each; then checks every task once more
in this process, one after the other, and prints the CPU seconds that took (the work itself, whatever else the
machine runs: on two free cores the wall clock is about half of it). It prints the counts by code, and checks:
Git LFS pointers named (F113), the lowercase "passed" log line of
07-bertscore named (T304), no T302 on a test that calls its module (02, 25, 26, 30).

Run: python benchmarks/check_official.py /path/to/LMR-Bench/benchmark
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

TARGET_SECONDS = 30.0
MODULE_TESTS = ("02-HITs", "25-AdaLora", "26-Hyena", "30-ERGO")


def _run(bench: Path, *args: str) -> tuple[float, dict[str, object]]:
    exe = Path(sys.executable).parent / "lmrbench"
    start = time.monotonic()
    out = subprocess.run([str(exe), "tasks", "check", str(bench), "--format", "json", *args],
                         capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    if out.returncode not in (0, 1):
        raise SystemExit(f"tasks check failed ({out.returncode}): {out.stderr[-2000:]}")
    return wall, json.loads(out.stdout)


def _cpu(bench: Path) -> tuple[float, str, float]:
    """(CPU seconds of checking every task in this process, the costliest task, its seconds)."""
    from lmrbench.authoring.check import task_findings
    from lmrbench.core.taskset import load_taskset

    tasks, _ = load_taskset(bench)
    task_findings(tasks[0])  # imports
    costs = {}
    for t in tasks:
        start = time.process_time()
        task_findings(t)
        costs[t.name] = time.process_time() - start
    worst = max(costs, key=costs.__getitem__)
    return sum(costs.values()), worst, costs[worst]


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    bench = Path(sys.argv[1])
    load = os.getloadavg()[0]
    wall, doc = _run(bench)
    findings: list[dict[str, str]] = doc["findings"]  # type: ignore[assignment]
    print(f"all codes:        {wall:6.1f} s wall, {len(doc['tasks'])} tasks, load average {load:.1f} "  # type: ignore[arg-type]
          f"(target {TARGET_SECONDS:.0f} s on 2 free cores; ratio {wall / TARGET_SECONDS:.2f})")
    for sel in ("F,T", "L201"):
        w, d = _run(bench, "--select", sel)
        print(f"--select {sel:8s} {w:6.1f} s wall, {len(d['findings'])} findings")  # type: ignore[arg-type]
    cpu, worst, worst_s = _cpu(bench)
    print(f"CPU, every task in turn: {cpu:.1f} s (costliest {worst}: {worst_s:.1f} s); on 2 free cores about "
          f"{max(cpu / 2, worst_s):.1f} s wall")
    counts = Counter(f["code"] for f in findings)
    print("findings by code: " + ", ".join(f"{c} {n}" for c, n in sorted(counts.items())))
    lfs = [f for f in findings if f["code"] == "F113"]
    pointers = sum(int(f["message"].split(" file(s)")[0]) for f in lfs)
    print(f"F113 LFS pointers: {pointers} files in {len(lfs)} tasks")
    lower = [f for f in findings if f["code"] == "T304" and f["task"] == "07-bertscore"]
    print(f"T304 07-bertscore lowercase 'passed': {'named at line ' + str(lower[0]['line']) if lower else 'MISSED'}")
    t302 = [f["task"] for f in findings if f["code"] == "T302" and f["task"] in MODULE_TESTS]
    print(f"T302 on tests that call their module: {t302 or 'none'}")


if __name__ == "__main__":
    main()
