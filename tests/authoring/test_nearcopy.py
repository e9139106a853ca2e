"""Near-copy scan: each disguise of a golden body is found with its place; unrelated code is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.defect_set import BODY, HEADER, NEAR_COPIES, SIG, _fn
from lmrbench.authoring.check import nearcopy

SRC = Path(nearcopy.__file__).resolve().parents[1]


@pytest.mark.parametrize("label", sorted(NEAR_COPIES))
def test_every_disguise_is_found_where_it_is(tmp_path: Path, label: str) -> None:
    rel, code, text = NEAR_COPIES[label]
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / rel).write_text(text)
    (tmp_path / "other.py").write_text(HEADER + "def unrelated(x):\n    return [v * 2 for v in x if v]\n")
    (found,) = nearcopy.scan(tmp_path, {"greedy_decode": BODY})
    assert found.path == rel and found.qualname == "greedy_decode"
    assert (found.score == 1.0) == (code == "L201") and found.score >= nearcopy.NEAR_COPY_THRESHOLD
    if not rel.endswith(".ipynb"):
        lines = text.splitlines()
        first = lines[found.start_line - 1].strip()
        assert first == "tokens = list(prompt)" or first.startswith("rng = ")
        assert "return" in lines[found.end_line - 1]


def test_a_sibling_that_rewrote_half_the_body_is_not_reported(tmp_path: Path) -> None:
    lines = BODY.splitlines(keepends=True)
    half = [f"        z{i} = helper(z{i})\n" if i % 2 else ln for i, ln in enumerate(lines)]
    (tmp_path / "sib.py").write_text(HEADER + _fn("sib", SIG, "".join(half)))
    assert nearcopy.scan(tmp_path, {"greedy_decode": BODY}) == []
    assert nearcopy.scan(tmp_path, {"greedy_decode": BODY}, threshold=0.2)  # it is similar, just not a copy


def test_ordinary_code_is_not_a_near_copy_of_the_fixture_body() -> None:
    assert nearcopy.scan(SRC, {"greedy_decode": BODY}) == []


def test_normalization_drops_comments_and_docstrings_and_abstracts_names() -> None:
    a = nearcopy.tokens('x = np.exp(y)  # e\n"""doc"""\nreturn x + 1.5\n')
    b = nearcopy.tokens("value = np.exp(other)\nreturn value + 7\n")
    assert [t.text for t in a] == [t.text for t in b]
    assert [t.text for t in a][:4] == ["v", "=", "v", "."] and "exp" in [t.text for t in a]
    assert [t.line for t in a][-1] == 3


def test_binary_and_symlinked_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\0" + BODY.encode())
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "copy.py").write_text(BODY)
    (tmp_path / "link.py").symlink_to(tmp_path / "real" / "copy.py")
    assert [c.path for c in nearcopy.scan(tmp_path, {"f": BODY})] == ["real/copy.py"]


EMA = '''import torch


class Teacher:
    def __init__(self, student, teacher, decay=0.99):
        self.student, self.teacher, self.decay = student, teacher, decay
        for p_s, p_t in zip(
            self.student.parameters(), self.teacher.parameters()
        ):
            p_t.data.copy_(p_s.data)
            p_t.requires_grad = False

    @torch.no_grad()
    def update(self):
        """Move the teacher towards the student."""
        for p_s, p_t in zip(
            self.student.parameters(), self.teacher.parameters()
        ):
            p_t.mul_(self.decay).add_((1 - self.decay) * p_s)
'''
EMA_BODY = EMA[EMA.index("        for p_s, p_t", EMA.index("def update")):]


def test_a_loop_header_the_file_repeats_elsewhere_is_not_a_copy_of_a_short_body(tmp_path: Path) -> None:
    """A two-statement body whose loop header ``__init__`` repeats: over half of its fingerprints are there,
    but none of its assignment's, so the place shows the body's layout, not what it computes."""
    masked = EMA.replace(EMA_BODY, "        raise NotImplementedError\n")
    (tmp_path / "ema.py").write_text(masked)
    body = nearcopy.prepare("u", EMA_BODY)
    assert body is not None and nearcopy.best_span(masked, set(body.prints), body.length)[0] >= 0.5
    assert nearcopy.scan(tmp_path, {"Teacher.update": EMA_BODY}) == []


def test_a_twin_of_a_short_body_is_still_found(tmp_path: Path) -> None:
    stub = "        raise NotImplementedError\n"
    twin = (EMA + "\n    def update_slowly(self):\n" + EMA_BODY).replace(EMA_BODY, stub, 1)
    (tmp_path / "ema.py").write_text(twin)
    (found,) = nearcopy.scan(tmp_path, {"Teacher.update": EMA_BODY})
    assert found.score == 1.0 and twin.splitlines()[found.start_line - 1].strip().startswith("for p_s, p_t")
