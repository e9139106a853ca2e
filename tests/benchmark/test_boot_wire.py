"""The payload format, tested on both sides directly: what the host packs the boot unpacks to the same files,
what the boot packs of an out folder the host reads back, and the boot refuses a name that would leave its root
(the end-to-end runs test the same format through a real boot, one run at a time)."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from lmrbench.core.treeview import TreeView
from lmrbench.harness.payload import END, payload, unpack_out
from lmrbench.runtime import RUNTIME_DIR, boot_source


@pytest.fixture(scope="module")
def wire():
    """The boot's payload part, imported alone as a test does (the protocol module beside it on the path)."""
    sys.path.insert(0, str(RUNTIME_DIR))
    try:
        import lmrbench_bootwire

        yield lmrbench_bootwire
    finally:
        sys.path.remove(str(RUNTIME_DIR))


def test_the_boot_source_joins_its_parts_and_compiles_as_one_program() -> None:
    source = boot_source()
    compile(source, "<boot>", "exec")
    assert source.index("def _unpack(") < source.index("def _confine(") < source.index("def main(")


def test_what_the_host_packs_the_boot_unpacks_to_the_same_files(wire, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg" / "deep").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("x = 1\n")
    (repo / "pkg" / "deep" / "data.bin").write_bytes(bytes(range(256)) * 5000)  # over one read chunk
    (repo / "pkg" / "deep" / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(repo / "pkg" / "deep" / "run.sh", 0o755)
    tree = TreeView(repo, files={"added.txt": b"over the base\n"})
    data = payload(tree, {"lmrbench_x.py": b"y = 2\n"}, None)

    root = tmp_path / "root"
    root.mkdir()
    wire._unpack(io.BytesIO(data), str(root))
    got = root / "trusted" / "repo"
    assert (got / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (got / "pkg" / "deep" / "data.bin").read_bytes() == bytes(range(256)) * 5000
    assert os.stat(got / "pkg" / "deep" / "run.sh").st_mode & 0o100
    assert (got / "added.txt").read_bytes() == b"over the base\n"
    assert (root / "trusted" / "harness" / "lmrbench_x.py").read_bytes() == b"y = 2\n"


def test_what_the_boot_packs_of_an_out_folder_the_host_reads_back_without_its_links(wire, tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "reports").mkdir(parents=True)
    (out / "junit.xml").write_text("<testsuite/>")
    (out / "reports" / "seal.json").write_text("{}")
    (out / "link").symlink_to("/etc/passwd")
    back = tmp_path / "back" / "out"
    unpack_out(wire._pack_out(str(out)), back)
    assert sorted(p.relative_to(back).as_posix() for p in back.rglob("*")) == [
        "junit.xml", "reports", "reports/seal.json"]
    assert (back / "junit.xml").read_text() == "<testsuite/>"


@pytest.mark.parametrize("name", ["../escape", "/abs", "a//b", "a/./b", "a/.."])
def test_the_boot_refuses_a_name_that_would_leave_its_root(wire, tmp_path: Path, name: str) -> None:
    raw = name.encode()
    data = b"f 644 %d 1\n" % len(raw) + raw + b"x" + END
    with pytest.raises(ValueError, match="unsafe name"):
        wire._unpack(io.BytesIO(data), str(tmp_path / "root"))
    assert not (tmp_path / "escape").exists()


def test_a_payload_cut_inside_a_file_or_with_an_unknown_entry_is_refused(wire, tmp_path: Path) -> None:
    with pytest.raises(EOFError):
        wire._unpack(io.BytesIO(b"f 644 1 10\nabc"), str(tmp_path / "a"))
    with pytest.raises(ValueError, match="unknown entry"):
        wire._unpack(io.BytesIO(b"x 644 1 0\na" + END), str(tmp_path / "b"))
