"""Atomic writes: whole files with ordinary permissions, and staged folders that appear only when complete."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lmrbench.fsutil import atomic_write_text, staging_dir


def test_atomic_write_gives_the_mode_of_a_plain_write_and_leaves_no_temp(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    atomic_write_text(tmp_path / "a.txt", "a\r\nb")
    assert (tmp_path / "a.txt").read_bytes() == b"a\r\nb"
    assert stat.S_IMODE(os.stat(tmp_path / "a.txt").st_mode) == stat.S_IMODE(os.stat(plain).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "plain.txt"]


def test_staging_dir_is_removed_on_error_and_keeps_the_old_folder(tmp_path: Path) -> None:
    final = tmp_path / "task"
    final.mkdir()
    (final / "old.txt").write_text("old")
    with pytest.raises(RuntimeError), staging_dir(final, replace=True) as tmp:
        (tmp / "new.txt").write_text("new")
        raise RuntimeError("boom")
    assert [p.name for p in tmp_path.iterdir()] == ["task"] and (final / "old.txt").exists()
    with staging_dir(final, replace=True) as tmp:
        (tmp / "new.txt").write_text("new")
    assert [p.name for p in final.iterdir()] == ["new.txt"]
