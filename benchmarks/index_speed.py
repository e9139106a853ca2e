"""How fast the function index and masking are on a large synthetic repository.

Prints, measured in one run:
  - index_repo time / time of reading and ast.parse-ing the same files (target: at most 1.3);
  - the time to mask one function in a 10,000-line file.
The repository (about 2,000 files, 300,000 lines) is written to a temp folder and removed afterwards.
Usage: python benchmarks/index_speed.py [--files N] [--repeat K]
"""

from __future__ import annotations

import argparse
import ast
import gc
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lmrbench.authoring.task.mask import mask_source
from lmrbench.core.source.index import index_repo_report, index_source, python_files


def function_text(rng: random.Random, name: str, indent: str, method: bool) -> list[str]:
    """A plausible numeric function of about 12 lines."""
    args = "self, x, y=None" if method else "x, y=None"
    deco = [f"{indent}@functools.lru_cache(maxsize=None)"] if rng.random() < 0.1 else []
    kw = "async def" if rng.random() < 0.05 else "def"
    body = indent + "    "
    doc = f'{body}"""Compute {name} of x (see eq. {rng.randint(1, 9)})."""'
    lines = [*deco, f"{indent}{kw} {name}({args}):", doc]
    lines += [f"{body}# scale the input", f"{body}z = x * {rng.random():.3f} + (y or 0)"]
    if rng.random() < 0.3:
        lines += [f"{body}def helper(v):", f"{body}    return v - {rng.randint(1, 5)}"]
        lines += [f"{body}z = helper(z)"]
    lines += [
        f"{body}for i in range({rng.randint(2, 9)}):",
        f"{body}    if i % 2:",
        f"{body}        z = z - i * 0.5",
        f"{body}    else:",
        f"{body}        z = z + [i, i + 1][0]",
        f"{body}return z",
        "",
    ]
    return lines


def module_text(rng: random.Random, target_lines: int) -> str:
    lines = ['"""A synthetic module."""', "import functools", "import math", "", ""]
    n = 0
    while len(lines) < target_lines:
        n += 1
        if rng.random() < 0.4:
            lines += [f"class Model{n}:", f'    """Model {n}."""', "", "    scale = 2", ""]
            for k in range(rng.randint(2, 5)):
                if rng.random() < 0.15:
                    lines += ["    @property", f"    def prop{k}(self):", f"        return self.scale * {k}"]
                lines += function_text(rng, f"method{k}", "    ", True)
            lines.append("")
        else:
            lines += function_text(rng, f"func{n}", "", False)
            lines.append("")
    return "\n".join(lines) + "\n"


def build_repo(root: Path, files: int, lines_per_file: int) -> int:
    rng = random.Random(1234)
    total = 0
    for i in range(files):
        folder = root / f"pkg{i % 40}" / f"sub{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        text = module_text(rng, lines_per_file)
        total += text.count("\n")
        (folder / f"mod{i}.py").write_text(text)
    (root / ".git").mkdir()
    (root / ".git" / "ignored.py").write_text("def ignored(): pass\n")
    return total


def parse_all(root: Path) -> int:
    """The baseline: read every file the index reads and ast.parse it."""
    count = 0
    for rel in python_files(root):
        count += len(ast.parse((root / rel).read_bytes()).body)
    return count


def parse_all_gc_paused(root: Path) -> int:
    """The baseline with the cyclic garbage collector paused, as index_repo does: the walk's own cost."""
    gc.disable()
    try:
        return parse_all(root)
    finally:
        gc.enable()


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--lines", type=int, default=150, help="lines per file")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lmrbench-index-speed-"))
    try:
        total = build_repo(tmp, args.files, args.lines)
        index = index_repo_report(tmp)  # warm the file cache once, and check the result
        assert not index.problems, index.problems[:3]
        print(f"repo: {index.files} files, {total} lines, {len(index.functions)} functions")
        parse_runs, quiet_runs, index_runs = [], [], []
        for _ in range(args.repeat):  # interleaved, so all see the same machine load; best run counts
            parse_runs.append(timed(lambda: parse_all(tmp)))
            quiet_runs.append(timed(lambda: parse_all_gc_paused(tmp)))
            index_runs.append(timed(lambda: index_repo_report(tmp)))
        for label, i in (("wall", 0), ("cpu", 1)):
            t_parse = min(r[i] for r in parse_runs)
            t_quiet = min(r[i] for r in quiet_runs)
            t_index = min(r[i] for r in index_runs)
            print(
                f"{label}: read + ast.parse {t_parse:.2f} s, index_repo {t_index:.2f} s, "
                f"ratio {t_index / t_parse:.2f} (target <= 1.3); "
                f"over ast.parse with the collector paused too ({t_quiet:.2f} s): {t_index / t_quiet:.2f}"
            )

        big = module_text(random.Random(99), 10_000)
        funcs = index_source(big, "big.py")
        middle = funcs[len(funcs) // 2].qualname
        t_mask = min(timed(lambda: mask_source(big, [middle], file="big.py"))[0] for _ in range(args.repeat))
        print(f"mask one function ({middle}) in a {big.count(chr(10))}-line file: {t_mask * 1000:.0f} ms")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
