"""Time ``lmrbench tasks check`` on a real task set (the official LMR-Bench set as published) and check what it
must report there.

Give it the set's folder (for the official one: the ``benchmark/`` folder of du-nlp-lab/LMR-Bench at commit
2198c422, kept outside this repository). It runs the command three ways in fresh processes (all codes, JSON;
``--select F,T``; ``--select L201``) and prints the wall-clock seconds of each; then checks every task once more
in this process, one after the other, and prints the CPU seconds that took (the work itself, whatever else the
machine runs: on two free cores the wall clock is about half of it). It prints the counts by code, and checks:
Git LFS pointers named (F113), the lowercase "passed" log line of
07-bertscore named (T304), no T302 on a test that calls its module (02, 25, 26, 30), none of the false alarms
once reported there (T308 on a logged "Test Failed", L202 on 29-Sophia, F116 on 06-RepE's input data), and the
misses once found there (28's GPU need, 14's commented golden body and unseeded draws, 03/06/20's goal function
inside the test file).

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
FALSE_ALARMS = (("T308 (every except logs 'Test Failed')", "T308", None),
                ("L202 on 29-Sophia (helper the golden calls)", "L202", "29-Sophia"),
                ("F116 on 06-RepE (input data)", "F116", "06-RepE"))
MISSES = (("T310 28-SPIN GPU only (self.device = 'cuda')", "T310", "28-SPIN"),
          ("L206 14-EmojiCrypt golden body in comments", "L206", "14-EmojiCrypt"),
          ("F117 03-DoLa goal function in the test file", "F117", "03-DoLa"),
          ("F117 06-RepE goal function in the test file", "F117", "06-RepE"),
          ("F117 20-CAD goal function in the test file", "F117", "20-CAD"),
          ("T313 14-EmojiCrypt unseeded golden draws", "T313", "14-EmojiCrypt"))


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
    from lmrbench.authoring.check.check import task_findings
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
    for label, code, task in FALSE_ALARMS:
        hits = [f for f in findings if f["code"] == code and (task is None or f["task"] == task)]
        print(f"false alarm {label:44s} {'none' if not hits else f'{len(hits)} REPORTED'}")
    for label, code, task in MISSES:
        hits = [f for f in findings if f["code"] == code and f["task"] == task]
        print(f"found {label:50s} {hits[0]['path'] + ':' + str(hits[0]['line']) if hits else 'MISSED'}")


if __name__ == "__main__":
    main()
