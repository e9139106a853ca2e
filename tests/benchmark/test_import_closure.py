"""The installed modules a warm boot preloads for a task's trusted runs (``harness.import_closure``): the goal and
test files' imports, followed through the repository's own modules, which are never preloaded themselves."""

from __future__ import annotations

import os
from pathlib import Path

from helpers.vec_task import dedent, write_small_task
from lmrbench.harness.import_closure import MAX_MODULES, closure_modules, import_closure


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(dedent(text), encoding="utf-8")
    return root


REPO = {
    "calc.py": """
        import json
        import numpy as np
        from mylib.core import thing


        def add(a, b):
            import sympy.core
            return a + b
        """,
    "mylib/__init__.py": "from . import util\n",
    "mylib/util.py": "import networkx.algorithms.shortest_paths as sp\n",
    "mylib/core.py": """
        from .deep import helper
        from . import plain

        thing = 1
        """,
    "mylib/deep.py": """
        from transformers.models.llama import LlamaConfig
        from ..outside import nothing  # beyond the repository: never read
        """,
    "mylib/plain.py": "import scipy.special\n",
    "unit_test/unit_test_1.py": """
        import pytest
        import lmrbench_values
        from calc import add
        from helpers_local import check


        def test_add():
            assert add(2, 3) == 5
        """,
    "unit_test/helpers_local.py": "import pandas\n",
}


def test_imports_are_followed_through_the_repository_and_only_installed_modules_are_returned(tmp_path):
    repo = _write(tmp_path / "repo", REPO)
    got = import_closure(repo, ["calc.py", "unit_test/unit_test_1.py"])
    assert got == ["networkx.algorithms.shortest_paths", "numpy", "pandas", "pytest", "scipy.special",
                   "sympy.core", "transformers.models.llama"]
    # the repository's own modules, the harness's and the standard library's are never preloaded
    assert not {"calc", "mylib", "mylib.core", "helpers_local", "lmrbench_values", "json"} & set(got)


def test_a_module_the_repository_holds_is_never_preloaded(tmp_path):
    repo = _write(tmp_path / "repo", {
        **REPO,
        "numpy/README.md": "a root folder of that name shadows the installed one\n",
        "scripts/networkx.py": "# a folder a test may put on sys.path holds a module of that name\n",
        "mylib/scipy.py": "# inside a package: imported as mylib.scipy, never as scipy\n",
    })
    got = import_closure(repo, ["calc.py", "unit_test/unit_test_1.py"])
    assert "numpy" not in got and not any(m.startswith("networkx") for m in got)
    assert "scipy.special" in got


def test_syntax_errors_and_unreadable_files_are_passed_over(tmp_path):
    repo = _write(tmp_path / "repo", {
        "goal.py": "import torch\nfrom broken import x\nfrom gone import y\n",
        "broken.py": "def (:\n",
        "unit_test/test_goal.py": "import yaml\nfrom goal import f\n",
    })
    os.symlink("/etc/passwd", repo / "gone.py")  # a link: never read, still the repository's own
    (repo / "bytes.py").write_bytes(b"\xff\xfe\x00import torch\n")
    got = import_closure(repo, ["goal.py", "unit_test/test_goal.py", "bytes.py", "missing.py", "../escape.py"])
    assert got == ["torch", "yaml"]


def test_the_number_of_modules_is_capped(tmp_path):
    repo = _write(tmp_path / "repo", {"goal.py": "".join(f"import pkg{i}\n" for i in range(MAX_MODULES + 50))})
    assert len(import_closure(repo, ["goal.py"])) == MAX_MODULES


def test_a_task_reads_its_golden_file_and_is_computed_again_when_the_repository_changes(tmp_path):
    golden = "import numpy\n\n\ndef dot(a, b):\n    import sympy.core\n    return sum(x * y for x, y in zip(a, b))\n"
    task = write_small_task(tmp_path / "bench", goal="import numpy\n\n\ndef dot(a, b):\n    raise ValueError\n")
    impl = task.info.implementation(1)
    task.golden_path(impl).write_text(golden)  # the masked file lost the body's import; the golden one has it
    assert closure_modules(task, impl) == ("numpy", "sympy.core")
    assert closure_modules(task, impl) == ("numpy", "sympy.core")
    (task.repo_dir / "sympy.py").write_text("# the repository now holds a sympy of its own\n")
    assert closure_modules(task, impl) == ("numpy",)
