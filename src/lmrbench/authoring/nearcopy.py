"""Near-copies of a golden body anywhere in a repository: winnowed fingerprints over normalized tokens.

The golden body and every text file of the repository (Python, notebooks, Markdown, LaTeX, ...) are cut into
tokens the same way: comments and triple-quoted strings (docstrings) are dropped, numbers become ``0``, other
strings ``""``, and identifiers become ``v`` unless they are keywords, attribute names (after ``.``) or called
names (before ``(``), which carry what the code does and are rarely renamed. Hashes of every run of ``K``
tokens are winnowed (the smallest hash of each window of ``W`` hashes is kept, as in MOSS: any shared run of at
least ``K + W - 1`` tokens shares a fingerprint). The score of a place in a file is the share of the golden
body's fingerprints found within a span of at most 1.5 times the body's length there: 1.0 for a copy with
another signature, a renamed variable or another docstring, a little less for a copy with an added line, and
the share of the body repeated for a sibling function.

``NEAR_COPY_THRESHOLD`` was chosen from measurements (``benchmarks/nearcopy_threshold.py``, docs/checks.md): the
near-copy forms of the fixtures score 0.875 (a sibling with 3 of 16 lines changed) to 1.0, a sibling with 4 of
16 lines rewritten 0.66 and with 5 of 16 0.55, while the highest score of any other place, against any golden
body, in the bundled examples' repositories and lmrbench's own sources is 0.32.
"""

from __future__ import annotations

import keyword
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from lmrbench import jsonsafe

K = 5
"""Tokens per hashed run (k-gram)."""
W = 4
"""Hashes per winnowing window."""
NEAR_COPY_THRESHOLD = 0.5
"""A place scoring at least this is reported as a near-copy."""
MIN_FINGERPRINTS = 6
"""Bodies with fewer fingerprints than this are too short to compare fuzzily (the exact scan still runs)."""
SPAN_FACTOR = 1.5
"""A near-copy may be this much longer than the body (inserted lines)."""
MAX_FILE_BYTES = 2_000_000
"""Larger files are read up to this size."""
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", ".tox", ".mypy_cache"})

_TOKEN = re.compile(
    r"""(?P<tstr>[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''))"""
    r"""|(?P<str>[rRbBuUfF]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))"""
    r"""|(?P<comment>\#[^\n]*)"""
    r"""|(?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"""
    r"""|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"""
    r"""|(?P<op>\*\*=?|//=?|->|:=|[-+*/%@&|^<>=!]=|<<|>>|[-+*/%@&|^<>=~()\[\]{}.,:;])"""
)
_KEEP_NAMES = frozenset(keyword.kwlist) | {"self", "cls"}


@dataclass(frozen=True)
class Token:
    """One normalized token and the line it starts on (1-based)."""

    text: str
    line: int


@dataclass(frozen=True)
class NearCopy:
    """A place in a file that repeats a golden body."""

    path: str
    """The file, relative to the scanned folder."""
    start_line: int
    """First line of the matching span (1-based; for notebooks, in the cells' joined text)."""
    end_line: int
    """Last line of the matching span."""
    score: float
    """Share of the body's fingerprints found in the span (0-1)."""
    qualname: str
    """The goal function whose body it repeats."""

    @property
    def location(self) -> str:
        """``path:start-end``."""
        return f"{self.path}:{self.start_line}-{self.end_line}"


def tokens(text: str) -> list[Token]:
    """The normalized tokens of any text (code or prose holding code)."""
    out: list[Token] = []
    line = 1
    pos = 0
    prev = ""
    for m in _TOKEN.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        kind = m.lastgroup
        raw = m.group()
        if kind in ("tstr", "comment"):
            continue
        if kind == "str":
            tok = '""'
        elif kind == "num":
            tok = "0"
        elif kind == "name":
            after = text[m.end() : m.end() + 40].lstrip()
            tok = raw if raw in _KEEP_NAMES or prev == "." or after.startswith("(") else "v"
        else:
            tok = raw
        out.append(Token(tok, line))
        prev = tok
    return out


def _hashes(toks: list[Token]) -> list[int]:
    return [zlib.crc32(" ".join(t.text for t in toks[i : i + K]).encode()) for i in range(len(toks) - K + 1)]


def winnow(hashes: list[int]) -> set[int]:
    """The fingerprints of a hash sequence: the minimum of every window of ``W`` consecutive hashes."""
    if len(hashes) <= W:
        return set(hashes)
    return {min(hashes[i : i + W]) for i in range(len(hashes) - W + 1)}


def body_fingerprints(body: str) -> tuple[set[int], int]:
    """The fingerprints of a function body's text and its length in tokens."""
    toks = tokens(body)
    return winnow(_hashes(toks)), len(toks)


def read_text(path: Path) -> str | None:
    """A file's text for scanning (notebooks: their cells' sources joined), or None for a binary file."""
    try:
        raw = path.read_bytes()[:MAX_FILE_BYTES]
    except OSError:
        return None
    if b"\0" in raw[:8192]:
        return None
    text = raw.decode("utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            cells = jsonsafe.loads(text).get("cells", [])
            return "\n".join("".join(c.get("source", [])) if isinstance(c.get("source"), list)
                             else str(c.get("source", "")) for c in cells)
        except (ValueError, AttributeError):  # not JSON, or nested too deep: scanned as plain text
            return text
    return text


def best_span(text: str, prints: set[int], body_len: int) -> tuple[float, int, int]:
    """(score, first line, last line) of the span of ``text`` holding most of ``prints``."""
    toks = tokens(text)
    hashes = _hashes(toks)
    hits = [(i, h) for i, h in enumerate(hashes) if h in prints]
    if not hits or not prints:
        return 0.0, 0, 0
    span = max(int(body_len * SPAN_FACTOR), K)
    counts: dict[int, int] = {}
    best = (0, 0, 0)
    lo = 0
    for pos, h in hits:
        counts[h] = counts.get(h, 0) + 1
        while pos - hits[lo][0] > span:
            old = hits[lo][1]
            counts[old] -= 1
            if not counts[old]:
                del counts[old]
            lo += 1
        if len(counts) > best[0]:
            best = (len(counts), hits[lo][0], pos)
    n, first, last = best
    return n / len(prints), toks[first].line, toks[min(last + K - 1, len(toks) - 1)].line


def text_files(root: Path) -> list[Path]:
    """Every regular file under ``root`` (symlinks and version-control folders skipped), sorted."""
    out = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for p in entries:
            if p.is_symlink():
                continue
            if p.is_dir():
                if p.name not in SKIP_DIRS:
                    stack.append(p)
            elif p.is_file():
                out.append(p)
    return sorted(out)


def scan(
    root: Path,
    bodies: dict[str, str],
    *,
    threshold: float = NEAR_COPY_THRESHOLD,
    skip: frozenset[str] = frozenset(),
) -> list[NearCopy]:
    """Places under ``root`` that score at least ``threshold`` against any of ``bodies`` (qualname -> body text).

    ``skip`` holds relative paths not scanned. One result per (file, body), the best place in the file.
    """
    prepared = {q: body_fingerprints(b) for q, b in bodies.items()}
    prepared = {q: (p, n) for q, (p, n) in prepared.items() if len(p) >= MIN_FINGERPRINTS}
    if not prepared:
        return []
    every = set().union(*(p for p, _ in prepared.values()))
    found: list[NearCopy] = []
    for path in text_files(root):
        rel = path.relative_to(root).as_posix()
        if rel in skip:
            continue
        text = read_text(path)
        if text is None:
            continue
        file_prints = set(_hashes(tokens(text)))
        if not file_prints & every:
            continue
        for qual, (prints, length) in prepared.items():
            if len(file_prints & prints) < threshold * len(prints):
                continue  # cannot reach the threshold anywhere in this file
            score, first, last = best_span(text, prints, length)
            if score >= threshold:
                found.append(NearCopy(rel, first, last, round(score, 3), qual))
    return found
