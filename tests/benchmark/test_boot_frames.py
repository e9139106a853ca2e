"""The byte formats the boot reads and writes (``runtime/lmrbench_frames.py``), tested directly against the host's
side (``harness.payload``): what one side writes the other reads back, and malformed bytes are refused with a
ValueError, and nothing else, without a byte written outside the folder the boot was given."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmrbench.harness.payload import END, payload, read_frame, unpack_out
from lmrbench.runtime import RUNTIME_DIR
from lmrbench.runtime.lmrbench_protocol import RUN_MARK

sys.path.insert(0, str(RUNTIME_DIR))  # the module imports the protocol by its sandbox name, as the boot does
try:
    import lmrbench_frames as frames
finally:
    sys.path.remove(str(RUNTIME_DIR))


def _entry(kind: bytes, name: str, body: bytes = b"", mode: int = 0o644) -> bytes:
    raw = name.encode("utf-8", "surrogateescape")
    return b"%s %o %d %d\n" % (kind, mode, len(raw), len(body)) + raw + body


def _listing(root: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        out[rel] = ("link", os.readlink(p)) if p.is_symlink() else ("dir",) if p.is_dir() else (
            "file", p.read_bytes(), p.stat().st_mode & 0o777)
    return out


def test_the_payload_the_host_writes_unpacks_to_the_same_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("X = 1\n")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "alias.py").symlink_to("pkg/mod.py")
    data = payload(repo, {"plugin.py": b"P = 2\n"}, None)
    root = tmp_path / "root"
    frames.unpack_tree(io.BytesIO(data), str(root))
    got = _listing(root / "trusted" / "repo")
    assert got["pkg/mod.py"] == ("file", b"X = 1\n", 0o644)
    assert got["run.sh"] == ("file", b"#!/bin/sh\n", 0o755)
    assert got["alias.py"] == ("link", "pkg/mod.py")
    assert (root / "trusted" / "harness" / "plugin.py").read_bytes() == b"P = 2\n"


def test_the_out_folder_the_boot_packs_is_what_the_host_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "reports").mkdir(parents=True)
    (out / "reports" / "junit.xml").write_bytes(b"<testsuite/>")
    (out / "seal.json").write_text("{}")
    (out / "leak").symlink_to("/etc/passwd")  # a link is never packed
    frame = frames.out_frame(3, frames.pack_out(str(out)), b"worker said hi\n")
    got = read_frame(b"pytest output\n" + frame)
    assert got.worker_output == "worker said hi\n"
    unpack_out(got.out_tar, tmp_path / "back")
    assert _listing(tmp_path / "back") == {"reports": ("dir",), "reports/junit.xml": ("file", b"<testsuite/>", 0o644),
                                           "seal.json": ("file", b"{}", 0o644)}


@pytest.mark.parametrize(("data", "problem"), [
    (_entry(b"f", "a", b"xy")[:-1], "ends inside a file"),
    (_entry(b"f", "abc")[:-2], "ends inside a name"),
    (_entry(b"q", "a") + END, "unknown entry"),
    (b"f 644 1\n" + END, "not an entry"),
    (b"f 9z 1 0\na" + END, "not an entry"),
    (b"f 644 1 0", "not an entry"),
    (_entry(b"f", "../escape") + END, "unsafe name"),
    (_entry(b"f", "/abs") + END, "unsafe name"),
    (_entry(b"f", "a") + _entry(b"f", "a") + END, "cannot be written"),
    (_entry(b"f", "a") + _entry(b"f", "a/b") + END, "cannot be written"),
    (_entry(b"l", "up", b"..") + _entry(b"f", "up/escape") + END, "beneath one of its links"),
    (_entry(b"l", "up", b"/") + _entry(b"d", "up") + END, "beneath one of its links"),
])
def test_a_malformed_payload_is_refused_with_a_value_error_naming_the_problem(tmp_path: Path, data: bytes,
                                                                             problem: str) -> None:
    root = tmp_path / "root"
    with pytest.raises(ValueError, match=problem):
        frames.unpack_tree(io.BytesIO(data), str(root))
    assert {p.name for p in tmp_path.iterdir()} <= {"root"}


NAMES = ["a", "a/b", "a/b/c", "../x", "/abs", "a/./b", "a//b", "", ".", "n" * 300, "a/" + "m" * 255, "\udcff",
         "a\x00b", "up", "up/x"]
_payload_entry = st.tuples(st.sampled_from([b"d", b"f", b"l", b"x"]), st.sampled_from(NAMES),
                           st.sampled_from([b"", b"body", b"..", b"/", b"a", b"../.."]), st.sampled_from([0, 1, -1]))


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(_payload_entry, max_size=6), cut=st.integers(min_value=-30, max_value=0),
       junk=st.binary(max_size=12), end=st.booleans())
def test_any_payload_is_unpacked_or_refused_with_a_value_error(entries: list[tuple[bytes, str, bytes, int]],
                                                               cut: int, junk: bytes, end: bool) -> None:
    data = b""
    for kind, name, body, skew in entries:
        raw = name.encode("utf-8", "surrogateescape")
        data += b"%s 644 %d %d\n" % (kind, len(raw), len(body) + skew) + raw + body
    data = data + (END if end else junk)
    data = data[: len(data) + cut] if cut else data
    with tempfile.TemporaryDirectory() as tmp:
        with contextlib.suppress(ValueError):  # anything else fails the test
            frames.unpack_tree(io.BytesIO(data), os.path.join(tmp, "inner", "root"))
        written = [p.relative_to(tmp).as_posix() for p in Path(tmp).rglob("*")]
        assert all(w == "inner" or w.startswith("inner/root") for w in written), written


def test_a_request_line_gives_its_three_sizes() -> None:
    assert frames.request_sizes(RUN_MARK + b"12 3456 30000\n") == (12, 3456, 30000)


@settings(max_examples=300, deadline=None)
@given(rest=st.one_of(st.binary(max_size=40), st.lists(st.integers(min_value=-5, max_value=10**6), max_size=4).map(
    lambda xs: b" ".join(b"%d" % x for x in xs))), newline=st.booleans())
def test_any_request_line_gives_sizes_or_a_value_error(rest: bytes, newline: bool) -> None:
    line = RUN_MARK + rest + (b"\n" if newline else b"")
    try:
        sizes = frames.request_sizes(line)
    except ValueError:
        return
    assert len(sizes) == 3 and all(isinstance(s, int) and s >= 0 for s in sizes)
