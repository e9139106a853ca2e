"""Precision and recall of ``lmrbench tasks check`` on a labelled set of tasks with planted defects.

The set (tests/helpers/planted_set.py) is written fresh: one defect per task, plus clean tasks carrying the traps
of the official task set (a module called through its instance, an assertion message naming the result, a goal
function partly masked in its own test file, trusted recorded data, official info.json spellings). A finding is a
(task, code) pair; it is right when the task's label holds the code. Precision = right / reported, recall =
right / labelled.

Run: python benchmarks/check_planted.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from helpers.planted_set import write_planted_set  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bench = Path(tmp) / "planted"
        labels = write_planted_set(bench)
        exe = Path(sys.executable).parent / "lmrbench"
        start = time.monotonic()
        out = subprocess.run([str(exe), "tasks", "check", str(bench), "--format", "json"],
                             capture_output=True, text=True, check=False)
        seconds = time.monotonic() - start
        doc = json.loads(out.stdout)
    found = {(f["task"], f["code"]) for f in doc["findings"]}
    wanted = {(t, c) for t, codes in labels.items() for c in codes}
    right = found & wanted
    precision = len(right) / len(found) if found else 1.0
    recall = len(right) / len(wanted) if wanted else 1.0
    print(f"{len(labels)} tasks, {len(wanted)} planted findings, {len(found)} reported, {len(right)} right "
          f"({seconds:.1f} s)")
    for task, code in sorted(found - wanted):
        print(f"  false alarm: {task} {code}")
    for task, code in sorted(wanted - found):
        print(f"  missed:      {task} {code}")
    print(f"precision {precision:.3f}")
    print(f"recall    {recall:.3f}")


if __name__ == "__main__":
    main()
