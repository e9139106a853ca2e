"""How well ``task suggest`` finds the function a paper describes, and how long a validated task takes from it.

Writes repository+paper pairs (``tests/helpers/suggest_fixture.py``: a numpy repository of about 30 functions,
six of them methods of six papers, and a PDF of one paper), in three forms each: the target named as its paper
names it (``dpo_loss``); anonymous (``compute_objective``, no docstring), where only its body's words and the
paper's can meet; and obfuscated (also its parameters and variables named ``v0``, ``v1``...), where only its calls
and operations are left. Prints the rank of the target in each, top-1 and top-3 accuracy, and the ranking's
time; then runs ``lmrbench task suggest ... --create 1`` (the installed console script) on ``--create-pairs``
pairs and prints the seconds from the command to a validated task.

    python benchmarks/suggest_accuracy.py [--create-pairs 1] [--sandbox local|docker]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.suggest_fixture import METHODS, make_pair, target_ref  # noqa: E402
from lmrbench.authoring.suggest.paper_passages import pdf_passages  # noqa: E402
from lmrbench.authoring.suggest.suggest_rank import rank_functions  # noqa: E402
from lmrbench.core.source.index import index_repo  # noqa: E402

VARIANTS = ("named", "anonymous", "obfuscated")


def ranking(folder: Path) -> tuple[dict[str, list[int]], float]:
    """The target's rank in every pair, by variant, and the mean seconds of one ranking (paper read, index,
    BM25)."""
    ranks: dict[str, list[int]] = {v: [] for v in VARIANTS}
    seconds = 0.0
    for variant in VARIANTS:
        for m in METHODS:
            pair = folder / f"{m.name}-{variant}"
            repo, pdf = make_pair(pair, m, git=False, anonymous=variant == "anonymous",
                                  obfuscated=variant == "obfuscated")
            start = time.perf_counter()
            ranked = rank_functions(repo, index_repo(repo), pdf_passages(pdf))
            seconds += time.perf_counter() - start
            refs = [r.function.ref for r in ranked]
            want = target_ref(m, anonymous=variant != "named")
            rank = refs.index(want) + 1 if want in refs else len(refs) + 1
            ranks[variant].append(rank)
            print(f"  {pair.name:<42} rank {rank:>2} of {len(refs)}  (first: {refs[0]})")
    return ranks, seconds / sum(len(r) for r in ranks.values())


def create_one(folder: Path, sandbox: str | None) -> tuple[float, bool, str]:
    """Seconds from ``task suggest --create 1`` to its end, whether it left a valid task, its output's end."""
    repo, pdf = make_pair(folder, METHODS[1])
    exe = Path(sys.executable).with_name("lmrbench")
    argv = [str(exe), "task", "suggest", str(repo), "--paper", str(pdf), "--create", "1", "--out",
            str(folder / "bench")] + (["--sandbox", sandbox] if sandbox else [])
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    seconds = time.perf_counter() - start
    valid = proc.returncode == 0 and "valid, in" in proc.stdout
    return seconds, valid, (proc.stdout + proc.stderr)[-600:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--create-pairs", type=int, default=1, help="pairs made into a validated task (0: none)")
    parser.add_argument("--sandbox", choices=("local", "docker"), default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="suggest-accuracy-") as tmp:
        print("ranking (targets named as the paper names them, anonymous, obfuscated):")
        ranks, per_rank = ranking(Path(tmp) / "rank")
        for variant, found in [*ranks.items(), ("all", [r for rs in ranks.values() for r in rs])]:
            n = len(found)
            top1 = sum(r == 1 for r in found)
            top3 = sum(r <= 3 for r in found)
            print(f"{variant:<10} top-1 accuracy: {top1}/{n} = {top1 / n:.0%}; "
                  f"top-3 accuracy: {top3}/{n} = {top3 / n:.0%}")
        print(f"ranking time: {per_rank * 1000:.0f} ms per repository+paper")
        times = []
        for k in range(args.create_pairs):
            seconds, valid, tail = create_one(Path(tmp) / f"create-{k}", args.sandbox)
            times.append(seconds)
            print(f"task suggest --create 1, pair {k + 1}: {seconds:.1f} s, {'valid' if valid else 'NOT valid'}")
            if not valid:
                print(tail)
        if times:
            print(f"time from command to a validated task: mean {sum(times) / len(times):.1f} s over "
                  f"{len(times)} pair(s) (environment preparation included when not cached)")


if __name__ == "__main__":
    main()
