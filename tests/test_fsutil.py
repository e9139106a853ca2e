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


POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
           b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")


def test_git_lfs_pointers_are_found_and_real_files_are_not(tmp_path: Path) -> None:
    from lmrbench.fsutil import is_lfs_pointer, lfs_pointers

    (tmp_path / "unit_test" / "data").mkdir(parents=True)
    (tmp_path / "unit_test" / "data" / "cases.pkl").write_bytes(POINTER)
    (tmp_path / "notes.md").write_bytes(b"version https://git-lfs.github.com/spec/v1 is how a pointer begins\n")
    (tmp_path / "big.bin").write_bytes(POINTER + b"\0" * 2000)  # a pointer's text at the start of a real file
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x").write_bytes(POINTER)
    (tmp_path / "link.pkl").symlink_to(tmp_path / "unit_test" / "data" / "cases.pkl")
    assert is_lfs_pointer(tmp_path / "unit_test" / "data" / "cases.pkl")
    assert not is_lfs_pointer(tmp_path / "notes.md") and not is_lfs_pointer(tmp_path / "big.bin")
    assert lfs_pointers(tmp_path) == [Path("unit_test/data/cases.pkl")]
