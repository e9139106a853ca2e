"""A small task written by the tests themselves: a two-function arithmetic repo, masked, with its tests."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from helpers.tasks import Impl
from helpers.tasks import write_task as write_task_folder
from lmrbench.authoring.task.mask import mask_source

REPO = "calc"
CALC_PY = '''"""Tiny arithmetic used by the validation tests."""


def add(a, b):
    """Sum of a and b."""
    return a + b


def scale(xs, k):
    """Multiply every item by k."""
    out = []
    for x in xs:
        out.append(x * k)
    return out


def unrelated():
    return "kept"
'''

TEST_ADD = '''from calc import add


def test_add_small():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-4, 1) == -3
'''

TEST_SCALE = '''from calc import scale


def test_scale():
    assert scale([1, 2, 3], 2) == [2, 4, 6]


def test_scale_empty():
    assert scale([], 5) == []
'''

# An official script-style test: it logs the verdict and exits 0 even on a mismatch.
LEGACY_SCALE = '''import logging
import os
import sys
import unittest
from pathlib import Path

sys.path.append(os.path.abspath(os.path.join(os.path.dirname(__file__), '..')))

from calc import scale


class TestScale(unittest.TestCase):
    def test_scale(self):
        if scale([1, 2, 3], 2) == [2, 4, 6] and scale([], 3) == []:
            logging.info("Test Passed")
        else:
            logging.info("Test Failed")


if __name__ == "__main__":
    log_dir = Path(__file__).resolve().parent / 'logs'
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = log_dir / 'unit_test_3.log'
    logging.basicConfig(filename=log_file, filemode="w", level=logging.INFO,
                        format="%(asctime)s - %(message)s")
    unittest.main()
'''


def write_task(
    bench: Path,
    name: str = "1-Calc",
    *,
    tests: dict[str, str] | None = None,
    legacy: bool = False,
    dockerfile: bool = True,
) -> Path:
    """Write a task folder ``bench/name`` with impl 1 = add, impl 2 = scale (impl 3 = scale, legacy test)."""
    files = {"unit_test/unit_test_1.py": TEST_ADD, "unit_test/unit_test_2.py": TEST_SCALE}
    if legacy:
        files["unit_test/unit_test_3.py"] = LEGACY_SCALE
    if tests is not None:
        files = tests
    impls = [Impl("add", "unit_test/unit_test_1.py", "Add."), Impl("scale", "unit_test/unit_test_2.py", "Scale.")]
    if legacy:
        impls.append(Impl("scale", "unit_test/unit_test_3.py", "Scale."))
    return write_task_folder(
        bench, name, repo=REPO, goal_file="calc.py", goal=mask_source(CALC_PY, ["add", "scale"], file="calc.py"),
        golden=CALC_PY, impls=impls, files={"README.md": "# calc\n", **files}, info={"paper_name": "Calc"},
        dockerfile=dockerfile,
    )


def write_candidate(root: Path, calc_source: str, extra: dict[str, str] | None = None) -> Path:
    """A repo-shaped candidate folder holding ``calc.py`` (and any extra files it tries to smuggle in)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text(calc_source)
    for rel, text in (extra or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def tree_hash(root: Path) -> str:
    """A hash of every path, mode and content under ``root`` (symlinks by target)."""
    h = hashlib.sha256()
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files + dirs):
            p = Path(dirpath) / name
            st = p.lstat()
            h.update(f"{p.relative_to(root).as_posix()}|{st.st_mode:o}".encode())
            if p.is_symlink():
                h.update(os.readlink(p).encode())
            elif p.is_file():
                h.update(p.read_bytes())
    return h.hexdigest()
