"""The out folder a run sends back is untrusted bytes: reading it raises ValueError and nothing else, and never
writes outside the folder it is given, whatever the listing holds."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmrbench.harness.payload import END, unpack_out

NAMES = ["out", "out/", "out/a", "out/a/b", "out/a/b/c.xml", "out/../escape", "/out/abs", "out/./a", "out//a",
         "escape", "out/\x00nul", "out/" + "n" * 300, "out/a/" + "m" * 255, "out/\udcff", "out/junit.xml"]

_entry = st.tuples(st.sampled_from([b"d", b"f", b"l", b"x"]), st.sampled_from(NAMES),
                   st.binary(max_size=8), st.sampled_from([0, 1, -1, 7]))


def _frame(entries: list[tuple[bytes, str, bytes, int]]) -> bytes:
    """A listing as the boot script writes it, each entry's declared sizes off by ``skew`` bytes when asked."""
    out = b""
    for kind, name, body, skew in entries:
        raw = name.encode("utf-8", "surrogatepass")
        out += b"%s 644 %d %d\n" % (kind, len(raw) + (skew if kind == b"x" else 0), len(body) + skew) + raw + body
    return out


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(_entry, max_size=6), cut=st.integers(min_value=-40, max_value=0),
       junk=st.binary(max_size=12), end=st.booleans())
def test_any_listing_is_read_back_or_refused_with_a_value_error(entries: list[tuple[bytes, str, bytes, int]],
                                                                cut: int, junk: bytes, end: bool) -> None:
    data = _frame(entries) + (END if end else junk)
    data = data[: len(data) + cut] if cut else data
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp) / "inner" / "out"
        with contextlib.suppress(ValueError):  # anything else fails the test
            unpack_out(data, out_dir)
        written = {p.relative_to(tmp).as_posix() for p in Path(tmp).rglob("*")}
        assert all(w == "inner" or w.startswith("inner/out") for w in written), written


@pytest.mark.parametrize(("names", "problem"), [
    (["out/a", "out/a/b"], "cannot be written"),  # a file where a folder must go
    (["out/a/b", "out/a"], "cannot be written"),  # a folder where a file must go
    (["out"], "names the out folder itself as a file"),
])
def test_a_listing_that_cannot_be_written_says_so_in_a_value_error(tmp_path: Path, names: list[str],
                                                                   problem: str) -> None:
    data = _frame([(b"f", n, b"<x/>", 0) for n in names]) + END
    with pytest.raises(ValueError, match=problem):
        unpack_out(data, tmp_path / "out")


def test_a_well_formed_listing_is_written_as_it_says(tmp_path: Path) -> None:
    data = _frame([(b"d", "out/reports", b"", 0), (b"f", "out/reports/junit.xml", b"<testsuite/>", 0),
                   (b"f", "out/../escape", b"no", 0)]) + END
    unpack_out(data, tmp_path / "out")
    assert (tmp_path / "out" / "reports" / "junit.xml").read_bytes() == b"<testsuite/>"
    assert not (tmp_path / "escape").exists()
