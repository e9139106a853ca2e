"""Near-copies of a golden body anywhere in a repository: winnowed fingerprints over normalized tokens.

The golden body and every text file of the repository (Python, notebooks, Markdown, LaTeX, ...) are cut into
tokens the same way: comments and triple-quoted strings (docstrings) are dropped, numbers become ``0``, other
strings ``""``, and identifiers become ``v`` unless they are keywords, attribute names (after ``.``) or called
names (before ``(``), which carry what the code does and are rarely renamed. Hashes of every run of ``K``
tokens are winnowed (the smallest hash of each window of ``W`` hashes is kept, as in MOSS: any shared run of at
least ``K + W - 1`` tokens shares a fingerprint). The score of a place in a file is the share of the golden
body's fingerprints found within a span of at most 1.5 times the body's length there: 1.0 for a copy with
another signature, a renamed variable or another docstring, a little less for a copy with an added line, and
the share of the body repeated for a sibling function. A place whose hits all lie in the body's loop and branch
headers (none inside a simple statement) is no copy: a short body's ``for ... in zip(...)`` header, repeated by
its class's ``__init__``, can be half of its fingerprints.

``NEAR_COPY_THRESHOLD`` was chosen from measurements (``benchmarks/nearcopy_threshold.py``, docs/checks.md): the
near-copy forms of the fixtures score 0.875 (a sibling with 3 of 16 lines changed) to 1.0, a sibling with 4 of
16 lines rewritten 0.66 and with 5 of 16 0.55, while the highest score of any other place, against any golden
body, in the bundled examples' repositories and lmrbench's own sources is 0.32.
"""

from __future__ import annotations

import bisect
import keyword
import math
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from lmrbench import jsonsafe, pyparse
from lmrbench.authoring.check import statementshare as share

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
    r"""|(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<call>(?=\s*\())?"""
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
    lacks: tuple[str, ...] = ()
    """Names of the body's statements it does not repeat found nowhere in its file (empty: it has them all)."""

    @property
    def location(self) -> str:
        """``path:start-end``."""
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass
class Tokenized:
    """A text cut into normalized tokens, with the offsets they start at (lines are computed only when asked)."""

    text: str
    words: list[str]
    starts: list[int]
    _newlines: list[int] | None = None

    def line(self, index: int) -> int:
        """The 1-based line of token ``index``."""
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        return bisect.bisect_right(self._newlines, self.starts[index] - 1) + 1


def tokenize(text: str) -> Tokenized:
    """The normalized tokens of any text (code or prose holding code)."""
    words: list[str] = []
    starts: list[int] = []
    prev = ""
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "tstr" or kind == "comment":
            continue
        if kind == "str":
            tok = '""'
        elif kind == "num":
            tok = "0"
        elif kind == "name":
            raw = m.group(kind)
            tok = raw if raw in _KEEP_NAMES or prev == "." or m.group("call") is not None else "v"
        else:
            tok = m.group()
        words.append(tok)
        starts.append(m.start())
        prev = tok
    return Tokenized(text, words, starts)


def tokens(text: str) -> list[Token]:
    """The normalized tokens of any text, each with its line."""
    t = tokenize(text)
    return [Token(w, t.line(i)) for i, w in enumerate(t.words)]


def _hashes(words: list[str]) -> list[int]:
    ids: dict[str, int] = {}
    nums = [ids.setdefault(w, zlib.crc32(w.encode())) for w in words]
    return [hash(tuple(nums[i : i + K])) for i in range(len(nums) - K + 1)]


def winnow(hashes: list[int]) -> set[int]:
    """The fingerprints of a hash sequence: the minimum of every window of ``W`` consecutive hashes."""
    if len(hashes) <= W:
        return set(hashes)
    return {min(hashes[i : i + W]) for i in range(len(hashes) - W + 1)}


def body_fingerprints(body: str) -> tuple[set[int], int]:
    """The fingerprints of a function body's text and its length in tokens."""
    words = tokenize(body).words
    return winnow(_hashes(words)), len(words)


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


def _trim(hits: list[tuple[int, int]], lo: int, hi: int, gap: int) -> tuple[int, int]:
    """Drop stray hits at either end of ``hits[lo..hi]`` that lie more than ``gap`` tokens from the others."""
    while hi - lo >= 2 and hits[lo + 1][0] - hits[lo][0] > gap:
        lo += 1
    while hi - lo >= 2 and hits[hi][0] - hits[hi - 1][0] > gap:
        hi -= 1
    return lo, hi


def _best_span(tok: Tokenized, hashes: list[int], prints: set[int], body_len: int) -> tuple[float, list[int]]:
    """(score, token positions of the hits in the best span)."""
    hits = [(i, h) for i, h in enumerate(hashes) if h in prints]
    if not hits or not prints:
        return 0.0, []
    span = max(int(body_len * SPAN_FACTOR), K)
    counts: dict[int, int] = {}
    best = (0, 0, 0)
    lo = 0
    for j, (pos, h) in enumerate(hits):
        counts[h] = counts.get(h, 0) + 1
        while pos - hits[lo][0] > span:
            old = hits[lo][1]
            counts[old] -= 1
            if not counts[old]:
                del counts[old]
            lo += 1
        if len(counts) > best[0]:
            best = (len(counts), lo, j)
    first, last = _trim(hits, best[1], best[2], max(2 * K, body_len // 4))
    n = len({h for _, h in hits[first : last + 1]})
    return n / len(prints), [i for i, _ in hits[first : last + 1]]


def _def_spans(text: str) -> list[tuple[int, int]]:
    """(first, last line) of every function definition of a Python text ([] when it does not parse)."""
    import ast

    try:
        tree = pyparse.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _lines(tok: Tokenized, positions: list[int], defs: list[tuple[int, int]]) -> tuple[int, int]:
    """The lines of a span of hits; in Python, those of the hits inside the function holding most of them."""
    last_tok = len(tok.words) - 1
    lines = [(tok.line(p), tok.line(min(p + K - 1, last_tok))) for p in positions]
    best: list[tuple[int, int]] = []
    best_size = 1 << 30
    for start, end in defs:
        inside = [ln for ln in lines if start <= ln[0] <= end]
        if len(inside) > len(best) or (len(inside) == len(best) and inside and end - start < best_size):
            best, best_size = inside, end - start
    chosen = best if len(best) * 2 >= len(lines) else lines
    return chosen[0][0], max(e for _, e in chosen)


def best_span(text: str, prints: set[int], body_len: int) -> tuple[float, int, int]:
    """(score, first line, last line) of the span of ``text`` holding most of ``prints``.

    Stray fingerprints far from the rest (a common line such as ``return loss`` earlier in the file) are left
    out of the span, so its lines are those of the copy itself.
    """
    tok = tokenize(text)
    score, positions = _best_span(tok, _hashes(tok.words), prints, body_len)
    if not positions:
        return 0.0, 0, 0
    return (score, *_lines(tok, positions, []))


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PREFILTER_SHARE = 0.5
"""A file is tokenized for a body only when it holds at least this share of the body's kept names."""


def kept_names(words: list[str]) -> frozenset[str]:
    """The identifiers a normalized token list keeps (called and attribute names), keywords left out."""
    return frozenset(w for w in words if w not in _KEEP_NAMES and w != "v" and _IDENT.fullmatch(w))


@dataclass(frozen=True)
class Body:
    """A golden body prepared for the scan."""

    qualname: str
    prints: frozenset[int]
    length: int
    words: tuple[str, ...]
    names: frozenset[str]
    exact: bool
    """Too short to compare fuzzily: searched as a whole token sequence."""
    inner: frozenset[int] = frozenset()
    """The fingerprints that lie inside one simple statement of the body (not a loop's or branch's header): a
    place must repeat one of them to be a near-copy (empty: the body is not Python; no such rule)."""
    statements: tuple[share.Statement, ...] = ()
    """The body's simple statements (:mod:`lmrbench.authoring.check.statementshare`); a near-copy must repeat
    ``MIN_STATEMENT_SHARE`` of them."""
    statement_names: tuple[frozenset[str], ...] = ()  # the kept names of each of ``statements``

    @property
    def needed(self) -> int:
        """How many of ``names`` a file must hold to be worth tokenizing."""
        return len(self.names) if self.exact else math.ceil(PREFILTER_SHARE * len(self.names))


def _inner_prints(tok: Tokenized, hashes: list[int], prints: set[int]) -> frozenset[int]:
    """The fingerprints of ``prints`` (among the body's ``hashes``) whose run of ``K`` tokens lies inside one
    simple statement."""
    spans = pyparse.simple_statement_spans(tok.text)
    out = set()
    for i, h in enumerate(hashes):
        if h in prints:
            first, last = tok.starts[i], tok.starts[i + K - 1]
            if any(lo <= first and last < hi for lo, hi in spans):
                out.add(h)
    return frozenset(out)


def prepare(qualname: str, body: str, *, exact_ok: bool = True) -> Body | None:
    """A body ready to scan for; None when it is too short for either search."""
    tok = tokenize(body)
    words = tok.words
    hashes = _hashes(words)
    prints = winnow(hashes)
    if len(prints) >= MIN_FINGERPRINTS:
        return Body(qualname, frozenset(prints), len(words), tuple(words), kept_names(words), False,
                    _inner_prints(tok, hashes, prints),
                    share.statements(tok.text, tok.starts, tok.words, hashes, K),
                    share.statement_names(tok.text, tok.starts, tok.words))
    if exact_ok and words:
        return Body(qualname, frozenset(), len(words), tuple(words), kept_names(words), True)
    return None


def _find_run(haystack: list[str], needle: tuple[str, ...]) -> int:
    k = len(needle)
    first = needle[0]
    return next((i for i, w in enumerate(haystack) if w == first and tuple(haystack[i : i + k]) == needle), -1)


def scan_text(rel: str, text: str, bodies: list[Body], threshold: float = NEAR_COPY_THRESHOLD) -> list[NearCopy]:
    """The places of one file's text that repeat any of ``bodies`` (one per body, the best)."""
    names = set(_IDENT.findall(text))
    todo = [b for b in bodies if len(b.names & names) >= b.needed]
    if not todo:
        return []
    tok = tokenize(text)
    hashes = _hashes(tok.words)
    file_prints = set(hashes)
    found = []
    defs: list[tuple[int, int]] | None = None
    for b in todo:
        if b.exact:
            at = _find_run(tok.words, b.words)
            if at >= 0:
                found.append(NearCopy(rel, tok.line(at), tok.line(at + len(b.words) - 1), 1.0, b.qualname))
            continue
        if len(file_prints & b.prints) < threshold * len(b.prints):
            continue  # cannot reach the threshold anywhere in this file
        score, positions = _best_span(tok, hashes, set(b.prints), b.length)
        if b.inner and not any(hashes[p] in b.inner for p in positions):
            continue  # only the body's loop and branch headers are repeated: its layout, not what it computes
        if positions and score >= threshold:
            if defs is None:
                defs = _def_spans(text) if rel.endswith(".py") else []
            first, last = _lines(tok, positions, defs)
            lacks: tuple[str, ...] = ()
            if score < 1.0:
                place = [p for p in positions if first <= tok.line(p) <= last] or positions
                span = hashes[place[0] : place[-1] + 1], tok.words[place[0] : place[-1] + K]
                kept, lacks = share.statement_gaps(b.statements, b.statement_names, *span, set(tok.words))
                if kept < min(threshold, share.MIN_STATEMENT_SHARE):
                    continue  # one block of the body repeated (a shared initialisation), not the body
            found.append(NearCopy(rel, first, last, round(score, 3), b.qualname, lacks))
    return found


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

    Bodies too short to compare fuzzily are not searched here. ``skip`` holds relative paths not scanned. One
    result per (file, body), the best place in the file.
    """
    prepared = [b for q, t in bodies.items() if (b := prepare(q, t, exact_ok=False)) is not None]
    if not prepared:
        return []
    found: list[NearCopy] = []
    for path in text_files(root):
        rel = path.relative_to(root).as_posix()
        if rel in skip:
            continue
        text = read_text(path)
        if text is not None:
            found += scan_text(rel, text, prepared, threshold)
    return found
