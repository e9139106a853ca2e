"""How fast the authoring app answers on a large repository.

Prints, measured in one run:
  - time to the first frame: from interpreter start (imports included) to the task set screen drawn, in a
    fresh process (target 0.5 s);
  - time to a filtered function list: from a keystroke in the function search to the list showing the
    matches, on a repository of about 2,000 files (target 1 s), and the time the worker took to copy and
    index it.
The repository is written to a temp folder (by benchmarks/index_speed.py's generator) and removed afterwards.
Usage: python benchmarks/tui_speed.py [--files N]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from index_speed import build_repo  # noqa: E402

FIRST_FRAME = """
import time
t0 = time.perf_counter()
import asyncio, sys
from lmrbench.tui.app import make_app

async def main():
    app = make_app(sys.argv[1])
    async with app.run_test(size=(120, 40)):  # entered once the first screen is painted
        print(type(app.screen).__name__, time.perf_counter() - t0)

asyncio.run(main())
"""


def first_frame(bench: Path) -> float:
    """Seconds from interpreter start to the first screen, in a new process (imports are most of it)."""
    argv = [sys.executable, "-c", FIRST_FRAME, str(bench)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    screen, seconds = out.stdout.split()
    assert screen == "TaskSetScreen", out.stdout
    return float(seconds)


async def filtered_list(repo: Path, bench: Path, query: str) -> tuple[float, int, float, list[float]]:
    """(index seconds, functions, seconds to the first filtered list, seconds per further keystroke)."""
    from textual.widgets import OptionList

    from lmrbench.tui.app import make_app

    app = make_app(bench)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#source").value = str(repo)
        start = time.perf_counter()
        await pilot.press("ctrl+g")
        while screen.step != "function":
            await asyncio.sleep(0.01)
        t_index = time.perf_counter() - start
        options = screen.query_one("#fp-list", OptionList)
        per_key = []
        for n in range(1, len(query) + 1):
            start = time.perf_counter()
            await pilot.press(query[n - 1])
            await pilot.pause()
            per_key.append(time.perf_counter() - start)
        shown = options.option_count
        return t_index, len(screen.functions), per_key[0], per_key[1:] + [float(shown)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--lines", type=int, default=150, help="lines per file")
    parser.add_argument("--query", default="mod1method2")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lmrbench-tui-speed-"))
    try:
        repo = tmp / "repo"
        build_repo(repo, args.files, args.lines)
        shutil.rmtree(repo / ".git")
        bench = tmp / "bench"
        bench.mkdir()
        t_first = min(first_frame(bench) for _ in range(3))
        print(f"first frame: {t_first:.2f} s (target 0.5 s): ratio {t_first / 0.5:.2f}")
        t_index, functions, t_first_key, rest = asyncio.run(filtered_list(repo, bench, args.query))
        shown = int(rest.pop())
        worst = max([t_first_key, *rest])
        print(f"copy + index {args.files} files ({functions} functions) in the worker: {t_index:.2f} s")
        print(f"filtered list after a keystroke: first {t_first_key:.3f} s, worst {worst:.3f} s over"
              f" {len(args.query)} keys, {shown} rows shown for {args.query!r}")
        print(f"(target 1 s): ratio {worst / 1.0:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
