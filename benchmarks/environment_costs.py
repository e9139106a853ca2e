"""What task environments cost: N tasks that pin the same framework, built as layered images (one shared framework
layer, a thin layer per task) against N separate images (each holding its own copy of the framework).

Two modes:
  python benchmarks/environment_costs.py BENCH
      the tasks of BENCH (e.g. torch tasks) as they are: each is prepared (built when missing) and the bytes
      are read from the engine. A separate image holds the same files as the layered one (base + framework +
      the task's own), so its bytes are computed from the layered images' sizes; its build seconds are the
      framework layer's build plus the task layer's, as they were measured on this machine.
  python benchmarks/environment_costs.py --stand-in numpy --tasks 3
      everything measured: N small tasks written here that pin the stand-in framework, built layered and then
      as N separate images (the stand-in is simply not treated as a framework), without layer cache.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from lmrbench.authoring.check.dockerfile import write_dockerfile
from lmrbench.benchmark.sandbox.environments.image_build import build_seconds
from lmrbench.benchmark.sandbox.environments.images import docker_client
from lmrbench.benchmark.sandbox.environments.layers import PARENT_LABEL
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.core.taskset import Task, load_task, load_taskset


def _size(client, tag: str) -> int:
    return int(client.images.get(tag).attrs["Size"])


def _report(n: int, layered_bytes: int, separate_bytes: int, layered_s: float, separate_s: float) -> None:
    print(f"{n} tasks, layered:  {layered_bytes / 1e9:8.2f} GB on disk, {layered_s:8.0f} s of builds")
    print(f"{n} tasks, separate: {separate_bytes / 1e9:8.2f} GB on disk, {separate_s:8.0f} s of builds")
    print(f"  saved: {(separate_bytes - layered_bytes) / 1e9:.2f} GB "
          f"({layered_bytes / separate_bytes:.2f} of the bytes), "
          f"build seconds ratio {layered_s / separate_s:.2f}")


def from_bench(bench: Path) -> None:
    client = docker_client(timeout=3600)
    runner = DockerRunner()
    tasks, _ = load_taskset(bench)
    rows = []
    for task in tasks:
        t0 = time.perf_counter()
        tag = runner.prepare(task)
        took = time.perf_counter() - t0
        img = client.images.get(tag)
        parent = img.labels.get(PARENT_LABEL, "")
        rows.append((task.name, tag, parent, took))
    frameworks = {p for _, _, p, _ in rows if p.startswith("lmrbench-framework")}
    base_size = _size(client, runner.resolve_base())
    layered = base_size + sum(_size(client, f) - base_size for f in frameworks)
    separate, layered_s, separate_s = 0, 0.0, 0.0
    for f in sorted(frameworks):
        secs = build_seconds(f) or 0.0
        layered_s += secs
        print(f"framework {f}: {(_size(client, f) - base_size) / 1e9:.2f} GB over the base, built in {secs:.0f} s")
    for name, tag, parent, took in rows:
        own = _size(client, tag) - (_size(client, parent) if parent else base_size)
        layered += own
        separate += _size(client, tag)
        task_s = build_seconds(tag) or took
        layered_s += task_s
        separate_s += task_s + (build_seconds(parent) or 0.0 if parent in frameworks else 0.0)
        print(f"task {name}: {tag} adds {own / 1e6:,.1f} MB on {parent or 'the base'}; task layer built in "
              f"{task_s:.0f} s (prepare now: {took:.1f} s)")
    _report(len(rows), layered, separate, layered_s, separate_s)


TEST = "from vec import dot\n\n\ndef test_dot():\n    assert dot([1, 2], [3, 4]) == 11\n"


def _task(root: Path, k: int, stand_in: str, extra: str) -> Task:
    task = root / f"{k}-Env{k}"
    (task / "repo" / "unit_test").mkdir(parents=True)
    (task / "repo" / "vec.py").write_text("def dot(a, b):\n    return sum(x * y for x, y in zip(a, b))\n")
    (task / "repo" / "unit_test" / "test_vec.py").write_text(TEST)
    (task / "repo" / "requirements.txt").write_text(f"{stand_in}\n{extra}\n")
    info = {"instance_id": k, "repo_folder_name": "repo", "implementations": [
        {"index": 1, "goal_file": "vec.py", "goal_function": "dot", "unit_test_file": "unit_test/test_vec.py"}]}
    (task / "info.json").write_text(json.dumps(info))
    write_dockerfile(task, "repo")
    return load_task(task)


def stand_in(project: str, n: int) -> None:
    client = docker_client(timeout=3600)
    extras = ["six==1.16.0", "iniconfig==2.0.0", "tomli==2.0.1", "pyparsing==3.1.2", "idna==3.7"]
    with tempfile.TemporaryDirectory() as tmp:
        tasks = [_task(Path(tmp), k, project, extras[k % len(extras)]) for k in range(1, n + 1)]
        made: list[str] = []
        layered_runner = DockerRunner(framework_projects=frozenset({project.split("=")[0].lower()}))
        separate_runner = DockerRunner(framework_projects=frozenset())
        try:
            t0 = time.perf_counter()
            tags = [layered_runner.prepare(t, rebuild=True) for t in tasks]
            layered_s = time.perf_counter() - t0
            parent = client.images.get(tags[0]).labels[PARENT_LABEL]
            made += [*tags, parent]
            base = _size(client, layered_runner.resolve_base())
            layered = _size(client, parent) + sum(_size(client, t) - _size(client, parent) for t in tags)
            t0 = time.perf_counter()
            solo = [separate_runner.prepare(t, rebuild=True) for t in tasks]
            separate_s = time.perf_counter() - t0
            made += solo
            separate = base + sum(_size(client, t) - base for t in solo)
            print(f"stand-in framework {project}: layer {(_size(client, parent) - base) / 1e6:,.1f} MB over the base")
            _report(n, layered, separate, layered_s, separate_s)
        finally:
            for tag in reversed(made):
                try:
                    client.images.remove(tag)
                except Exception as exc:  # kept by a container, or gone: say so and go on
                    print(f"could not remove {tag}: {exc}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench", nargs="?", help="a task set whose tasks pin the same framework (e.g. torch)")
    parser.add_argument("--stand-in", default="", help="measure everything with this small framework project")
    parser.add_argument("--tasks", type=int, default=3, help="tasks written for --stand-in")
    args = parser.parse_args()
    if args.stand_in:
        stand_in(args.stand_in, args.tasks)
    elif args.bench:
        from_bench(Path(args.bench))
    else:
        parser.error("give a task set, or --stand-in PROJECT")


if __name__ == "__main__":
    main()
