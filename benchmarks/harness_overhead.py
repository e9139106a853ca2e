"""What ``lmrbench validate`` costs beyond the test runs themselves, on Docker with warm images.

Prints, measured in one run on a copy of the task set (default: the example tasks):
  - validate (warm images, --jobs 1) over the same pytest commands run directly with ``docker run`` on the
    same images, trees (golden K times, masked, the same mutants) and limits (target <= 1.15);
  - a second validate with nothing changed over the first (every result reused, no rebuild; target <= 0.1);
  - validate --jobs 2 over --jobs 1, beside the same direct ``docker run`` commands two at a time over one at a
    time: the most that two slots can give on this machine and engine, with no harness at all.
Usage: python benchmarks/harness_overhead.py [BENCH] [--repeat K] [--max-mutants N] [--rounds R]

With ``--preload`` it measures instead what one trusted run costs when the warm boot preloads the modules the
task's code imports (``harness.import_closure``), on a task it writes itself whose goal module imports sympy
(and ``sympy.physics.mechanics``, through a module of the repository) and networkx, pinned, from the task's
image: a warm trusted run through lmrbench (after the first) over the same pytest command run bare on the same
image and tree (``docker run --rm IMAGE python -m pytest ...``; target <= 0.3), beside the warm run without the
closure (frameworks and pytest only, as before it), and the same on the local runner against the task venv's
own ``python -m pytest``. Usage: python benchmarks/harness_overhead.py --preload [--rounds R] [--no-local]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lmrbench.benchmark.sandbox.environments.base_image import ensure_base_image
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.benchmark.sandbox.running.run_limits import DEFAULT_CPUS, DEFAULT_MEMORY
from lmrbench.benchmark.validation.plan import (
    ValidateOptions,
    mutant_files,
    pick_mutants,
    plan_mutants,
    static_problems,
)
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.core.source.tree import Variant, build_tree
from lmrbench.core.taskset import load_taskset
from lmrbench.core.trust import impl_test_files
from lmrbench.harness.legacy import is_legacy_test
from lmrbench.harness.sandbox import Sandbox
from lmrbench.progress import NullProgress

ROOT = Path(__file__).resolve().parent.parent


def write_files(dest: Path, files: dict[str, str]) -> Path:
    """A repo-shaped folder holding ``files``."""
    for rel, text in files.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text, encoding="utf-8")
    return dest


def timed_validate(bench: Path, sandbox: Sandbox, opts: ValidateOptions, run_dir: Path) -> float:
    t0 = time.perf_counter()
    summary = validate_taskset(bench, sandbox=sandbox, options=opts, run_dir=run_dir)
    seconds = time.perf_counter() - t0
    bad = [f"{r.task}#{r.impl}: {'; '.join(r.reasons)}" for r in summary.rows if not r.valid]
    if bad or summary.problems:
        print("warning: not every task is valid:", *bad, *summary.problems, sep="\n  ")
    return seconds


Run = tuple[str, Path, list[str], bool]
"""(image tag, tree, test files, whether the tests should pass)."""


def direct_trees(bench: Path, opts: ValidateOptions, work: Path) -> list[Run]:
    """(image tag, tree, test files) of every run validate makes, built beforehand (not timed)."""
    sandbox = Sandbox(DockerRunner())
    tasks, _ = load_taskset(bench)
    runs = []
    n = 0
    for task in tasks:
        tag = sandbox.prepare(task)
        for impl in task.info.implementations:
            if static_problems(task, impl):
                continue
            files = [f for f in impl_test_files(task, impl) if not is_legacy_test(task.repo_dir / f)]
            if not files:
                continue
            variants: list[Variant] = ["golden"] * opts.repeat + ["masked"]
            mutants = plan_mutants(task, impl) if opts.max_mutants else []
            for goal, _qual, mutant in pick_mutants(mutants, opts.max_mutants):
                n += 1
                variants.append(write_files(work / f"cand-{n}", mutant_files(task, impl, goal, mutant)))
            for variant in variants:
                n += 1
                tree = build_tree(task, [impl.index], variant, work / f"tree-{n}")
                readable_by_all(tree)  # the container's user reads the bind mount
                runs.append((tag, tree, files, variant == "golden"))
    return runs


def readable_by_all(root: Path) -> None:
    """chmod a+rX below ``root`` (files written atomically are private to their owner)."""
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in files:
            path = Path(dirpath) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o444)


def direct_docker(runs: list[Run], runner: DockerRunner, jobs: int = 1) -> float:
    """Run each pytest command with plain ``docker run`` (same image, limits, no network), ``jobs`` at a time;
    seconds taken."""

    def one(run: Run) -> bool:
        tag, tree, files, should_pass = run
        proc = subprocess.run(
            ["docker", "run", "--rm", "--network", "none", "--user", f"{runner.uid}:{runner.gid}",
             f"--memory={runner.memory or DEFAULT_MEMORY}", f"--cpus={runner.cpus or DEFAULT_CPUS}",
             f"--pids-limit={runner.pids}",
             "-e", "PYTHONDONTWRITEBYTECODE=1", "-v", f"{tree}:/repo:ro", "-w", "/repo", tag,
             "python", "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=short", *files],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )
        if proc.returncode not in (0, 1):  # 1: tests failed; anything else: the command did not run
            raise SystemExit(f"direct docker run failed to run (exit {proc.returncode}) on {tree}")
        return (proc.returncode == 0) != should_pass

    t0 = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        unexpected = sum(pool.map(one, runs))
    seconds = time.perf_counter() - t0
    if unexpected:
        print(f"warning: {unexpected} direct runs did not pass or fail as the variant should")
    return seconds


PRELOAD_GOAL = '''"""Cheapest paths whose edge weights are exact fractions."""

import networkx as nx
import sympy

from .weights import total


def path_cost(edges, source, target):
    """The nodes of the cheapest path from ``source`` to ``target`` and its exact cost, as a string."""
    graph = nx.DiGraph()
    for a, b, w in edges:
        graph.add_edge(a, b, weight=float(sympy.Rational(w)), exact=w)
    nodes = nx.shortest_path(graph, source, target, weight="weight")
    return nodes, str(total(graph.edges[a, b]["exact"] for a, b in zip(nodes, nodes[1:])))
'''
PRELOAD_FILES = {
    "symgraph/__init__.py": "",
    "symgraph/weights.py": '''"""Edge weights as exact expressions."""

import sympy
from sympy.physics.mechanics import dynamicsymbols


def total(weights):
    """The exact sum of ``weights`` (strings or numbers)."""
    return sympy.nsimplify(sum(sympy.Rational(w) for w in weights))


def varying(name):
    """A weight that varies with time."""
    return dynamicsymbols(name)
''',
    "unit_test/unit_test_1.py": '''from symgraph.paths import path_cost

EDGES = [("a", "b", "1/2"), ("b", "c", "1/3"), ("a", "c", "1")]


def test_the_cheaper_path_through_b():
    assert path_cost(EDGES, "a", "c") == (["a", "b", "c"], "5/6")


def test_a_single_edge():
    assert path_cost(EDGES, "a", "b") == (["a", "b"], "1/2")
''',
    "requirements.txt": "sympy==1.13.3\nnetworkx==3.4.2\n",
}


def write_preload_task(bench: Path) -> Path:
    """The fixture task of ``--preload``: ``symgraph.paths.path_cost`` masked, golden beside it."""
    import json

    from lmrbench.authoring.check.dockerfile import write_dockerfile
    from lmrbench.authoring.task.mask import mask_source

    task = bench / "1-SymGraph"
    goal = "symgraph/paths.py"
    write_files(task / "symgraph-repo", {goal: mask_source(PRELOAD_GOAL, ["path_cost"], file=goal),
                                         **PRELOAD_FILES})
    write_files(task, {"golden_files/paths_golden.py": PRELOAD_GOAL})
    impl = {"instruction": "Implement path_cost.", "index": 1, "category": "Other", "goal_file": goal,
            "goal_function": "path_cost", "class_name": "", "golden_file": "golden_files/paths_golden.py",
            "unit_test_file": "unit_test/unit_test_1.py"}
    info = {"instance_id": 1, "paper_name": "SymGraph", "folder_name": task.name,
            "repo_folder_name": "symgraph-repo", "implementations": [impl]}
    (task / "info.json").write_text(json.dumps(info, indent=4))
    write_dockerfile(task, "symgraph-repo")
    return task


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def preload_costs(rounds: int, local: bool) -> None:
    """``--preload``: see the module docstring."""
    from lmrbench.benchmark.sandbox.running.local import LocalRunner
    from lmrbench.core.taskset import load_task
    from lmrbench.harness import spec, variant
    from lmrbench.harness.import_closure import closure_modules
    from lmrbench.schemas.testrun import TestStatus

    with tempfile.TemporaryDirectory(prefix="lmrbench-preload-") as tmp:
        os.chmod(tmp, 0o755)
        task = load_task(write_preload_task(Path(tmp) / "bench"))
        impl = task.info.implementation(1)
        tree = build_tree(task, [1], "golden", Path(tmp) / "golden")
        readable_by_all(tree)
        tests = ["unit_test/unit_test_1.py"]
        print(f"preloaded for the trusted runs: {', '.join(closure_modules(task, impl))}")
        closure = spec.closure_modules

        def trusted(sandbox: Sandbox, with_closure: bool = True) -> None:
            spec.closure_modules = closure if with_closure else (lambda task, impl: ())  # type: ignore[assignment]
            try:
                report = variant.evaluate_variant(sandbox, task, impl, spec.Golden(), timeout=600)
            finally:
                spec.closure_modules = closure  # type: ignore[assignment]
            if report.status is not TestStatus.PASSED:
                raise SystemExit(f"the trusted run did not pass: {report.detail}\n{report.log_tail}")

        sides = []
        docker = DockerRunner()
        ensure_base_image(docker, progress=NullProgress())
        sandbox = Sandbox(docker)
        tag = sandbox.prepare(task)
        bare = (tag, tree, tests, True)
        sides.append(("docker", sandbox, lambda: direct_docker([bare], docker),
                      "docker run --rm IMAGE python -m pytest"))
        if local:
            runner = Sandbox(LocalRunner())
            venv = Path(runner.prepare(task))
            cmd = [str(venv / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=short", *tests]

            def bare_local() -> None:
                subprocess.run(cmd, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)

            sides.append(("local", runner, bare_local, "the venv's python -m pytest"))
        try:
            for name, box, bare_run, bare_name in sides:
                trusted(box)  # the first run starts the warm boot, which imports the closure once
                trusted(box, with_closure=False)
                warm, before, bares = [], [], []
                for _ in range(rounds):  # alternated: the machine's load drifts
                    bares.append(_timed(bare_run))
                    warm.append(_timed(lambda b=box: trusted(b)))
                    before.append(_timed(lambda b=box: trusted(b, with_closure=False)))
                print(f"{name}: bare run ({bare_name}), median of {rounds}: {_median(bares):6.2f} s "
                      f"({', '.join(f'{v:.2f}' for v in bares)})")
                print(f"{name}: trusted run, warm, closure preloaded:   {_median(warm):6.2f} s "
                      f"({', '.join(f'{v:.2f}' for v in warm)})")
                print(f"{name}: trusted run, warm, without the closure: {_median(before):6.2f} s "
                      f"({', '.join(f'{v:.2f}' for v in before)})")
                print(f"{name}:   ratio warm / bare {_median(warm) / _median(bares):.3f} (target <= 0.3); "
                      f"without the closure {_median(before) / _median(bares):.3f}")
        finally:
            for _name, box, _bare, _bare_name in sides:
                box.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench", nargs="?", default=str(ROOT / "examples" / "tasks"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-mutants", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds; fastest counts")
    parser.add_argument("--cpus", type=float, default=None, help="CPUs of every container, both sides (default 1)")
    parser.add_argument("--preload", action="store_true", help="a trusted run's cost with the closure preloaded")
    parser.add_argument("--no-local", dest="local", action="store_false", help="--preload: Docker only")
    args = parser.parse_args()
    if args.preload:
        return preload_costs(max(args.rounds, 5), args.local)
    with tempfile.TemporaryDirectory(prefix="lmrbench-overhead-") as tmp:
        bench = Path(tmp) / "bench"
        shutil.copytree(args.bench, bench, ignore=shutil.ignore_patterns(".lmrbench"))
        os.chmod(tmp, 0o755)
        runner = DockerRunner(cpus=args.cpus)
        sandbox = Sandbox(runner)
        ensure_base_image(runner, progress=NullProgress())
        tasks, _ = load_taskset(bench)
        for task in tasks:  # warm images: builds are not part of the overhead
            sandbox.prepare(task)
        # the float64 tolerance probe is one more golden run, not overhead: left out on both sides
        opts = ValidateOptions(repeat=args.repeat, max_mutants=args.max_mutants, force=True, timeout=600,
                               check_tolerances=False)
        runs = direct_trees(bench, opts, Path(tmp) / "direct")
        print(f"{len(tasks)} tasks, {len(runs)} pytest runs per validate (repeat {args.repeat}, "
              f"up to {args.max_mutants} mutants per implementation)")

        # alternate the two sides and keep each one's fastest round: the machine's load drifts
        directs, directs2, validates = [], [], []
        for _ in range(args.rounds):
            directs.append(direct_docker(runs, runner))
            directs2.append(direct_docker(runs, runner, jobs=2))
            validates.append(timed_validate(bench, sandbox, opts, Path(tmp) / "run"))
        direct, direct2, first = min(directs), min(directs2), min(validates)
        reuse_opts = ValidateOptions(repeat=args.repeat, max_mutants=args.max_mutants, timeout=600,
                                     check_tolerances=False)
        second = timed_validate(bench, sandbox, reuse_opts, Path(tmp) / "run")
        jobs2_opts = ValidateOptions(repeat=args.repeat, max_mutants=args.max_mutants, force=True, jobs=2,
                                     timeout=600, check_tolerances=False)
        jobs2 = timed_validate(bench, sandbox, jobs2_opts, Path(tmp) / "run-jobs2")

        print(f"validate, warm images, --jobs 1:  {first:7.2f} s")
        print(f"direct docker run, same commands: {direct:7.2f} s")
        print(f"  rounds: validate {', '.join(f'{v:.1f}' for v in validates)}; "
              f"direct {', '.join(f'{d:.1f}' for d in directs)}")
        print(f"  overhead ratio {first / direct:.3f} (target <= 1.15)")
        print(f"second validate, nothing changed: {second:7.2f} s")
        print(f"  re-run ratio {second / first:.4f} (target <= 0.1)")
        print(f"validate --jobs 2:                {jobs2:7.2f} s")
        print(f"  jobs 2 / jobs 1 = {jobs2 / first:.3f}: {first / jobs2:.2f}x (on {os.cpu_count()} cores)")
        print(f"direct docker run, 2 at a time:   {direct2:7.2f} s")
        print(f"  2 at a time / 1 at a time = {direct2 / direct:.3f}: {direct / direct2:.2f}x, the engine's "
              f"ceiling for two slots here")


if __name__ == "__main__":
    sys.exit(main())
