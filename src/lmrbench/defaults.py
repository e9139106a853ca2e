"""The defaults every layer shares, defined once: folders, the cache root, the base image, time limits."""

from __future__ import annotations

import os
from pathlib import Path

UNIT_TEST_DIR = "unit_test"
"""The official folder of unit tests and their recorded data, inside the repository folder."""
BASE_IMAGE_TAG = "lmrbench-base:bookworm"
"""The base image lmrbench bootstraps from Debian packages where no registry answers."""
TEST_TIMEOUT = 600.0
"""Seconds one test run may take, by default."""


def unit_test_file(index: int) -> str:
    """Implementation ``index``'s official test file, relative to the repository: ``unit_test/unit_test_<k>.py``."""
    return f"{UNIT_TEST_DIR}/unit_test_{index}.py"


def recording_folder(index: int) -> str:
    """Where implementation ``index``'s recorded cases live, relative to the repository: ``unit_test/data/impl_<k>``."""
    return f"{UNIT_TEST_DIR}/data/impl_{index}"


def cache_root() -> Path:
    """Where wheelhouses, venvs and model replies are cached: $LMRBENCH_CACHE, else $XDG_CACHE_HOME/lmrbench
    (~/.cache/lmrbench)."""
    if os.environ.get("LMRBENCH_CACHE"):
        return Path(os.environ["LMRBENCH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lmrbench"


def data_root() -> Path:
    """Where lmrbench keeps what a run folder must not hold (the seal key, the records of agent exports):
    $LMRBENCH_DATA, else $XDG_DATA_HOME/lmrbench (~/.local/share/lmrbench)."""
    if os.environ.get("LMRBENCH_DATA"):
        return Path(os.environ["LMRBENCH_DATA"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "lmrbench"


def default_run_dir(bench: Path) -> Path:
    """Where ``lmrbench validate`` keeps results for a task set: ``<bench>/.lmrbench/validate``.

    For a single task folder given as the set, the folder beside it is used, so the task itself never changes.
    """
    bench = Path(bench)
    root = bench.parent if (bench / "info.json").is_file() else bench
    return root / ".lmrbench" / "validate"


SUGGEST_TOP = 10
"""``task suggest``: candidates examined and shown."""
SUGGEST_BUDGET = 300.0
"""``task suggest``: seconds all the caller commands together may run (preparing the environment not counted)."""
