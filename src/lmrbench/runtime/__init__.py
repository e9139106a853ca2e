"""Standalone modules that run inside a task's sandbox, where lmrbench is not installed (standard library, numpy,
pytest): the value codec and checkers shipped into tasks, the recorder, the pytest report plugin, and the split-run
programs (boot, candidate worker, call proxy). lmrbench reads them as files and ships them; it imports only the
codec and the checkers itself. No module here imports lmrbench."""

from __future__ import annotations

from pathlib import Path

RUNTIME_DIR = Path(__file__).parent
"""Where the standalone runtime modules live."""


def runtime_files(names: tuple[str, ...] | list[str]) -> dict[str, bytes]:
    """The bytes of the named runtime modules, by file name."""
    return {name: (RUNTIME_DIR / name).read_bytes() for name in names}
