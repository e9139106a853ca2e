"""One lmrbench cache (wheelhouse, venvs, locks) for every xdist worker of a test run, apart from the user's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def run_cache(factory: pytest.TempPathFactory) -> Path:
    """The run's cache folder: beside the workers' temp folders, so that the venv of a requirement set is made once
    per run rather than once per worker (seconds of pip each), as one machine's lmrbench processes share one cache."""
    base = factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "lmrbench-cache"
