"""Every test in this folder needs a Docker engine: it is marked ``docker`` here, so that where ``docker info``
answers and the engine cannot be reached it fails (see ``helpers.docker_engine``), and ``-m "not docker"`` leaves the
whole folder out."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of this folder ``docker`` (hooks of a conftest see the whole session's items)."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.docker)
