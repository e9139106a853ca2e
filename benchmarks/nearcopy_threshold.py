"""Measure the near-copy scores that NEAR_COPY_THRESHOLD separates.

Positives: each near-copy form of the defect fixture set (tests/authoring/defect_set.py), and siblings of its
golden body with 1..n of its lines rewritten. Negatives: the best score of any other place, against every golden
body (the bundled examples' and the fixture's), in the bundled examples' masked repositories and in lmrbench's
own source tree (about 14,000 lines of Python that copies none of them).

Run: python benchmarks/nearcopy_threshold.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from lmrbench.authoring.check import nearcopy
from lmrbench.authoring.check.check import golden_bodies
from lmrbench.core.taskset import load_taskset

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from helpers.defect_set import BODY, HEADER, NEAR_COPIES, SIG, _fn  # noqa: E402


def best_score(root: Path, bodies: dict[str, str]) -> tuple[float, str]:
    found = nearcopy.scan(root, bodies, threshold=0.0)
    top = max(found, key=lambda c: c.score, default=None)
    return (top.score, f"{top.path}:{top.start_line} vs {top.qualname}") if top else (0.0, "-")


def main() -> None:
    print("positives (near-copy forms of the fixture body, 16 lines)")
    with tempfile.TemporaryDirectory() as tmp:
        for label, (rel, _code, text) in NEAR_COPIES.items():
            d = Path(tmp) / label
            (d / rel).parent.mkdir(parents=True)
            (d / rel).write_text(text)
            score, _ = best_score(d, {"greedy_decode": BODY})
            print(f"  {label:22s} {score:.3f}")
        lines = BODY.splitlines(keepends=True)
        print("  sibling with k of its 16 lines rewritten (each to `        z = helper(z, k)`):")
        for k in range(1, 9):
            rewritten = [f"        z{i} = helper(z{i}, {i})\n" if i % 2 == 1 and i // 2 < k else ln
                         for i, ln in enumerate(lines)]
            d = Path(tmp) / f"sib{k}"
            d.mkdir()
            (d / "sib.py").write_text(HEADER + _fn("sib", SIG, "".join(rewritten)))
            score, _ = best_score(d, {"greedy_decode": BODY})
            print(f"    k={k}: {score:.3f}")

    tasks, _ = load_taskset(ROOT / "examples" / "tasks")
    bodies = {"fixture greedy_decode": BODY}
    for t in tasks:
        for impl in t.info.implementations:
            bodies |= {f"{t.name} {q}": b for q, b in golden_bodies(t, impl).items()}
    print("negatives (best score of any place, against every golden body)")
    worst = 0.0
    start = time.perf_counter()
    for t in tasks:
        score, where = best_score(t.repo_dir, bodies)
        worst = max(worst, score)
        print(f"  {t.name:24s} {score:.3f}  {where}")
    score, where = best_score(ROOT / "src" / "lmrbench", bodies)
    worst = max(worst, score)
    print(f"  {'src/lmrbench':24s} {score:.3f}  {where}")
    print(f"highest negative: {worst:.3f}; threshold: {nearcopy.NEAR_COPY_THRESHOLD}; "
          f"scan time {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
