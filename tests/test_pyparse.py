"""Python sources parse from many threads at once (CPython 3.11.7 alone fails with a SystemError)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lmrbench.pyparse import parse

SOURCE = "\n".join(f"def f{i}(x):\n    return [[x + {i} for _ in range(2)] for _ in range(3)]\n" for i in range(200))


def test_parallel_parses_all_succeed_and_agree() -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        trees = list(pool.map(lambda _: parse(SOURCE, "m.py"), range(40)))
    assert {len(t.body) for t in trees} == {200}


def test_imported_modules_are_the_top_level_names_of_absolute_imports() -> None:
    from lmrbench.pyparse import imported_modules

    tree = parse(
        "import numpy as np, torch.nn.functional\n"
        "from scipy.special import expit\n"
        "from . import sibling\n"
        "from .models import net\n"
        "def f():\n"
        "    import pandas\n"
        "    from sklearn import metrics\n"
    )
    assert imported_modules(tree) == {"numpy", "torch", "scipy", "pandas", "sklearn"}


def test_every_parse_of_lmrbench_goes_through_the_lock() -> None:
    """An unlocked ``ast.parse`` in any thread breaks a locked one in another (seen: litellm's provider list read
    while a generate thread spliced a reply)."""
    import lmrbench

    root = Path(lmrbench.__file__).parent
    unlocked = [str(p.relative_to(root)) for p in root.rglob("*.py")
                if p.name != "pyparse.py" and "ast.parse(" in p.read_text(encoding="utf-8")]
    assert unlocked == []
